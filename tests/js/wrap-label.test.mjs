// A chart's label wrapped for a phone (static/js/shared/plots.js wrapLabel), without a browser: lines break between
// words, never inside one (信息) nor before a full-width comma or closing bracket (issue 39, item 14).
import assert from "node:assert/strict";
import { test } from "node:test";

globalThis.document = { documentElement: { lang: "zh" } };
const { wrapLabel } = await import("../../static/js/shared/plots.js");

const lines = (label, width) => wrapLabel(label, width).split("<br>");

test("a Chinese label breaks between words, never inside 信息 nor before a full-width comma", () => {
  for (const width of [6, 8, 10, 12, 16]) {
    for (const label of ["同样的权重，去掉位置信息", "有位置信息（learned）", "训练好的模型，learned", "这个模型：未训练，2 层，none"]) {
      const got = lines(label, width);
      assert.equal(got.join("").replaceAll(" ", ""), label.replaceAll(" ", ""), label);
      for (const line of got) assert.doesNotMatch(line, /^[，、。：）]/u, `${label} at ${width}: ${got}`);
      assert.ok(!got.some((line, i) => line.endsWith("信") && got[i + 1]?.startsWith("息")), `${label}: ${got}`);
      assert.ok(!got.some((line) => /（$/u.test(line)), `${label}: ${got}`);
      assert.ok(!got.some((line, i) => /\d$/u.test(line) && got[i + 1]?.startsWith("层")), `${label}: ${got}`);
    }
  }
});

test("words the browser's dictionary splits (权重, 掩码, 未训练) stay whole at every width", () => {
  const words = ["权重", "掩码", "未训"];
  for (const width of [2, 4, 6, 7, 8, 9, 10, 12, 16]) {
    for (const label of ["同样的权重，去掉位置信息", "随机权重的模型", "learned，不加掩码", "未训练，2 层，无位置信息，不加掩码", "这个模型：未训练，2 层"]) {
      const got = lines(label, width);
      assert.equal(got.join("").replaceAll(" ", ""), label.replaceAll(" ", ""), label);
      for (const word of words) {
        assert.ok(!got.some((line, i) => line.endsWith(word[0]) && got[i + 1]?.startsWith(word[1])), `${label} at ${width}: ${got}`);
      }
    }
  }
});

test("a Latin label still breaks after spaces and commas only, keeping the space it breaks at", () => {
  assert.deepEqual(lines("same weights, positions removed", 16), ["same weights, ", "positions ", "removed"]);
  assert.deepEqual(lines("pos_emb", 4), ["pos_emb"]);
});

// Issue 39: a break took the space it fell on ("3 couches" drawn as 3 / couches read "3couches"; 「ブロック 1 の前」
// read 「ブロック1 の前」), and a line could start with a Japanese particle.
test("the lines put together are the label: a break keeps its space and adds none", () => {
  const labels = ["ce modèle : non entraîné, 3 couches, sans position", "attention du bloc 1 (z)", "avant le bloc 1",
    "ブロック 1 の前", "ブロック 2 の注意 (z)", "速い 4 分の 1 を停止", "直前の文字を見るヘッドの注意", "未训练，2 层，无位置信息"];
  for (const width of [4, 6, 8, 12, 16]) {
    for (const label of labels) {
      const got = lines(label, width);
      assert.equal(got.join(""), label, `${label} at ${width}: ${got}`);
      assert.ok(!got.some((line) => /^\s/u.test(line)), `${label} at ${width}: ${got}`);
    }
  }
});

test("a number keeps the word after it, and no line starts with a Japanese particle", () => {
  for (const width of [4, 6, 8, 12, 16]) {
    for (const label of ["non entraîné, 3 couches", "速い 4 分の 1 を停止", "直前の文字を見るヘッドの注意"]) {
      const got = lines(label, width);
      assert.ok(!got.some((line, i) => /\d\s*$/u.test(line) && got[i + 1]), `${label} at ${width}: ${got}`);
      assert.ok(!got.some((line, i) => i > 0 && /^[のをにがはでとへもや]/u.test(line)), `${label} at ${width}: ${got}`);
    }
  }
});
