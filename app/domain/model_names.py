"""How the operator's models are named: in `serve --model NAME=PATH`, HP_MODELS, and the requests' `model` field."""

MODEL_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}"  # 1 to 40 characters, safe in a URL and a file name
