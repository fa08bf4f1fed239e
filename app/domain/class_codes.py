"""The shape of a class code, of a class's event-stream and join keys, and its door's states: what a request must
match before any lookup."""

# No 0/O, 1/I/L: a code read off the board is typed right. 31**6 = 887 million codes.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
STREAM_KEY_CHARS = 32  # hex: 128 bits
JOIN_KEY_CHARS = 24  # hex: 96 bits, short enough for a QR code a phone reads from the back of the room
# The class's door: "open" lets new students in, "ask" seats them in the waiting room until the teacher admits
# them, "closed" refuses them (docs/class-mode.md, "The door").
DOORS = ("open", "ask", "closed")
