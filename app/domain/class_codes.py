"""The shape of a class code and of a class's event-stream key: what a request must match before any lookup."""

# No 0/O, 1/I/L: a code read off the board is typed right. 31**6 = 887 million codes.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
STREAM_KEY_CHARS = 32  # hex: 128 bits
