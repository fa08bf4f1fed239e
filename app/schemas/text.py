"""What a typed line may hold: no invisible control or format characters.

U+202E (RIGHT-TO-LEFT OVERRIDE) and its kin (U+202A-U+202E, U+2066-U+2069) reorder a line on screen without
changing what the model reads, so a page would show one order and judge another. Every other control (Cc) and
format (Cf) character is refused with them: none is a character of a poem. The line break is the one exception:
it is a character of the vocabulary (model/weights/vocab.json), between the lines of a poem.
"""

import unicodedata

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

ALLOWED_CONTROLS = {"\n"}  # in the vocabulary: the break between two lines of a poem


# The characters that reorder text on screen (Unicode's bidirectional marks, embeddings, overrides and isolates).
REORDERING = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def refuse_controls(value: str | None) -> str | None:
    """ctx.kind says what the character is: "reorders" (it changes the order shown), "format" (an invisible format
    character, such as U+200B ZERO WIDTH SPACE) or "control" (a control character)."""
    for i, ch in enumerate(value or ""):
        category = unicodedata.category(ch)
        if category in ("Cc", "Cf") and ch not in ALLOWED_CONTROLS:
            code = f"U+{ord(ch):04X}"
            name = unicodedata.name(ch, "unnamed control")
            kind = "reorders" if ord(ch) in REORDERING else "format" if category == "Cf" else "control"
            what = {"reorders": "a character that reorders a line on screen", "format": "an invisible format character",
                    "control": "an invisible control character"}[kind]
            raise PydanticCustomError(
                "control_character",
                "a line must not hold control or format characters: {code} ({name}) at character {index} is "
                "{what}",
                {"code": code, "name": name, "index": i + 1, "kind": kind, "what": what},
            )
    return value


NoControls = AfterValidator(refuse_controls)
