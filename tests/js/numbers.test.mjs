// The page's number formatting (static/js/shared/i18n.js), without a browser: how each language writes a figure.
// Run by scripts/test.sh (node --test tests/js); the dictionaries are the shipped static/i18n/{lang}.json.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const dictionary = (lang) => JSON.parse(readFileSync(new URL(`../../static/i18n/${lang}.json`, import.meta.url)));
globalThis.document = { documentElement: { lang: "en" } };
const { grouped, num, powerOfTen, scientific, setDict, tr, verbatim } = await import("../../static/js/shared/i18n.js");

function speak(lang) {
  globalThis.document.documentElement.lang = lang;
  setDict(dictionary(lang));
}

test("a power of ten as a book prints it, in each language's decimal mark", () => {
  speak("en");
  assert.equal(powerOfTen("3.6", "-7"), "3.6\u202f×\u202f10⁻⁷");
  assert.equal(powerOfTen("1", "-6"), "10⁻⁶");
  assert.equal(powerOfTen("2.5", "0"), "2.5");
  speak("fr");
  assert.equal(powerOfTen("3.6", "-7"), "3,6\u202f×\u202f10⁻⁷");
});

test("JavaScript's exponent form and plain decimals become the language's", () => {
  speak("en");
  assert.equal(num("2.7e-7"), "2.7\u202f×\u202f10⁻⁷");
  assert.equal(num(-0.5), "−0.5");
  assert.equal(num(4.787), "4.787");
  speak("fr");
  assert.equal(num(4.787), "4,787");
  assert.equal(num("8.3e+4"), "8,3\u202f×\u202f10⁴");
});

test("significant digits: plain from 0.01 to 999, a power of ten outside", () => {
  speak("en");
  assert.equal(scientific(0.0123456), "0.0123");
  assert.equal(scientific(12.345), "12.3");
  assert.equal(scientific(3.58e-7), "3.58\u202f×\u202f10⁻⁷");
  assert.equal(scientific(0.0019, 2), "1.9\u202f×\u202f10⁻³");
  assert.equal(scientific(0), "0");
});

test("whole numbers from 10 000 are grouped as the language groups them", () => {
  speak("en");
  assert.equal(num(35333), "35,333");
  assert.equal(num(9999), "9999");
  speak("fr");
  assert.equal(grouped(49536), new Intl.NumberFormat("fr").format(49536));
  assert.notEqual(grouped(49536), "49,536");
});

test("tr fills values, writes their decimals as the language does, and shows a missing key as itself", () => {
  speak("fr");
  assert.equal(tr("no_such_key_anywhere"), "no_such_key_anywhere");
  const key = Object.keys(dictionary("fr")).find((k) => typeof dictionary("fr")[k] === "string"
    && dictionary("fr")[k].includes("{value}"));
  assert.ok(key, "some French text takes a {value}");
  assert.ok(tr(key, { value: 2.5 }).includes("2,5"));
});

test("a name someone typed is filled in as typed, never read as a number", () => {
  // The lesson's dictionary says "The teacher's screen shows you as {name}."; a name may look like a number.
  const lesson = (lang) => JSON.parse(readFileSync(new URL(`../../static/i18n/lesson/${lang}.json`, import.meta.url)));
  for (const lang of ["en", "fr"]) {
    globalThis.document.documentElement.lang = lang;
    setDict({ ...dictionary(lang), ...lesson(lang) });
    for (const name of ["-3", "1.5", "2e5", "10000"]) {
      assert.ok(tr("class_me", { name: verbatim(name) }).includes(name), `${lang}: ${name}`);
    }
    // Unmarked, the same values are figures: "-3" gets the minus sign the charts print.
    assert.ok(tr("class_me", { name: "-3" }).includes("−3"));
  }
});
