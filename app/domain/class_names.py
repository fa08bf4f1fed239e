"""The names the server gives a student who gives none: "{animal} {n}", n their place in the joining order, in the
language of the student's phone (issue 38: a Japanese phone was named "Crane 1"). Short, friendly, unique in the
class; sixteen animals a class knows in each language. And the key names are compared by once the teacher refused
one (name_key)."""

import unicodedata

ANIMALS = {
    "en": ("Otter", "Panda", "Heron", "Lynx", "Koala", "Gecko", "Puffin", "Badger", "Ibis", "Marten", "Tapir",
           "Wombat", "Falcon", "Bison", "Crane", "Dingo"),
    "fr": ("Loutre", "Panda", "Héron", "Lynx", "Koala", "Gecko", "Macareux", "Blaireau", "Ibis", "Martre", "Tapir",
           "Wombat", "Faucon", "Bison", "Grue", "Dauphin"),
    "ja": ("カワウソ", "パンダ", "サギ", "ヤマネコ", "コアラ", "ヤモリ", "ペンギン", "アナグマ", "トキ", "リス", "バク",
           "ラッコ", "ハヤブサ", "シカ", "ツル", "イルカ"),
    "zh": ("水獭", "熊猫", "苍鹭", "猞猁", "考拉", "壁虎", "企鹅", "獾", "朱鹮", "松鼠", "貘", "海獭", "猎鹰", "野牛",
           "仙鹤", "海豚"),
}


def name_key(name: str) -> str:
    """What two names must share to be the same name to a teacher (the refused names' rule, docs/class-mode.md):
    NFKC folds full-width and half-width forms ("Ｔｏｍ", "ﾕｷ") into one, casefold folds case ("TOM", "tom"), and
    runs of spaces (an ideographic space included, once NFKC made it a plain one) count as one."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())
