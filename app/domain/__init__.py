"""What every layer may import: the lesson's steps, lines and model shape, and the shape of a class code.
Plain constants and data; imports nothing else of app."""
