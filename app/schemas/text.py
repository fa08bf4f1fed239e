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


def refuse_controls(value: str | None) -> str | None:
    for i, ch in enumerate(value or ""):
        if unicodedata.category(ch) in ("Cc", "Cf") and ch not in ALLOWED_CONTROLS:
            code = f"U+{ord(ch):04X}"
            name = unicodedata.name(ch, "unnamed control")
            raise PydanticCustomError(
                "control_character",
                "a line must not hold control or format characters (invisible, and some reorder a line on screen): "
                "{code} ({name}) at character {index}",
                {"code": code, "name": name, "index": i + 1},
            )
    return value


NoControls = AfterValidator(refuse_controls)
