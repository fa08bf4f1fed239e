"""How a comparison request runs: answers encoded once (encoding, responses), kept (response_cache), batched
across requests (batcher), and the verdict routes' path to the comparison they judge (verdict_path)."""
