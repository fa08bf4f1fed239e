// What a trained head looks at, in the page's language: /api/heads sends each head's role as data
// (model/heads.py describe: kinds and shares), and the words are static/i18n's head_role_* and head_pref_*.

import { tr } from "../shared/i18n.js";

/** A share as the page writes a percentage: whole, as model/heads.py's is_mostly reads it (51% and up). */
const share = (value) => tr("percent", { value: Math.round(100 * value) });

/** One preference as a noun phrase with its share: "the character 5 back (26%)". */
function preference(p) {
  const key = p.kind === "punctuation" && p.part !== null ? "punctuation_part" : p.kind;
  return tr(`head_pref_${key}`, { p: share(p.share), d: p.d, q: share(p.part ?? 0) });
}

/** role: {kind, named, entropy, entropy_uniform} -> one sentence. */
export function headRoleText(role) {
  const [x, y, z] = role.named.map(preference);
  const e = role.entropy.toFixed(1); // tr writes the decimal point as the language does (4,2 in French)
  const u = role.entropy_uniform.toFixed(1);
  const count = { 1: "one", 2: "two", 3: "three" }[role.named.length];
  const key = role.kind === "mostly" || role.kind === "largest" ? `head_role_${role.kind}_${count}` : `head_role_${role.kind}`;
  return tr(key, { x, y, z, e, u });
}
