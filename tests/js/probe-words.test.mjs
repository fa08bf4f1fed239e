// The probe and speeds panels' words (static/js/explorer/probe-words.js), without a browser: the sites in the
// model's order, the sentences built from an answer's numbers in each language's marks, and the head they name.
// Run by scripts/test.sh (node --test tests/js); the dictionaries are the shipped static/i18n/{lang}.json.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const dictionary = (lang) => JSON.parse(readFileSync(new URL(`../../static/i18n/${lang}.json`, import.meta.url)));
globalThis.document = { documentElement: { lang: "en" } };
const { setDict } = await import("../../static/js/shared/i18n.js");
const { ordered, pairLabel, probeVerdict, siteLabel, speedsVerdict } = await import(
  "../../static/js/explorer/probe-words.js");

function speak(lang) {
  globalThis.document.documentElement.lang = lang;
  setDict(dictionary(lang));
}

const site = (kind, layer, mae, early = mae) => ({ site: kind, layer, mae, by_range: { "0-15": early }, chance: 32 });
// As /api/probe lists them: residual 0..2, then z 1..2.
const NONE = { position: "none", sites: [site("residual", 0, 32.01), site("residual", 1, 19.06, 11.21),
  site("residual", 2, 27.1), site("z", 1, 29.4), site("z", 2, 11.3)] };

test("the sites run along the model: before block 1, then each block's z and the stream after it", () => {
  speak("en");
  assert.deepEqual(ordered(NONE.sites).map(siteLabel),
    ["before block 1", "block 1 attention (z)", "after block 1", "block 2 attention (z)", "after block 2"]);
});

test("the probe's sentence reads the none model's figures, in each language's decimal mark", () => {
  speak("en");
  assert.equal(probeVerdict([NONE], true), "Without positions, the probe misses by 32.0 places before block 1 "
    + "(chance: 32.0) and by 19.1 after it (11.2 on the first 16 positions): the causal mask has let the model work "
    + "out where it is.");
  speak("fr");
  const fr = probeVerdict([NONE], false);
  assert.ok(fr.includes("32,0") && fr.includes("19,1") && !fr.includes("19.1"), fr);
  assert.equal(probeVerdict([{ ...NONE, position: "learned" }], true), "");
});

test("the band's sentence names the head that looks most at the previous character, before and after", () => {
  speak("en");
  const answer = {
    all_on: { band: null, val_loss: 4.4991, previous: [[0.18, 0.06, 0.05, 0.32], [0.03, 0.09, 0.16, 0.524]] },
    stopped: { band: "fastest", val_loss: 6.6081, previous: [[0.1, 0.05, 0.06, 0.12], [0.08, 0.12, 0.1, 0.118]] },
  };
  assert.equal(speedsVerdict(answer), "With the fastest quarter stopped, the validation loss goes from 4.499 to 6.608 "
    + "nats per character, and layer 2 head 4 puts 12% of its attention on the previous character instead of 52%.");
  assert.equal(speedsVerdict({ ...answer, stopped: null }), "");
  speak("fr");
  assert.ok(speedsVerdict(answer).includes("4,499") && speedsVerdict(answer).includes("12\u202f%"));
});

test("a pair's label gives θ in degrees per character: one decimal from 1°, two digits below", () => {
  speak("en");
  assert.equal(pairLabel(0, 57.29577951308232), "pair 0 · 57.3°/char");
  assert.equal(pairLabel(12, 0.0573), "pair 12 · 0.057°/char");
});
