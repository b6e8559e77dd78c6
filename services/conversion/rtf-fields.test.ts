import assert from "node:assert/strict";
import { test } from "node:test";
import { fieldName, neutralizeRtfFields } from "./rtf-fields.js";

const clean = (rtf: string) => neutralizeRtfFields(Buffer.from(rtf, "latin1")).toString("latin1");

test("the instruction of INCLUDEPICTURE, INCLUDETEXT, LINK, IMPORT and DDE fields is emptied; the result stays", () => {
  assert.equal(
    clean('{\\rtf1 {\\field{\\*\\fldinst INCLUDEPICTURE "http://10.0.0.1/a.png" \\\\d}{\\fldrslt old picture}}\\par}'),
    "{\\rtf1 {\\field{\\*\\fldinst }{\\fldrslt old picture}}\\par}",
  );
  for (const name of ["INCLUDETEXT", "includetext", "LINK", "IMPORT", "DDEAUTO", "DDE", "INCLUDE"]) {
    assert.equal(clean(`{\\rtf1 {\\field{\\*\\fldinst ${name} "file:///etc/passwd"}{\\fldrslt r}}}`), "{\\rtf1 {\\field{\\*\\fldinst }{\\fldrslt r}}}", name);
  }
});

test("escapes, split groups and nested fields do not hide a field's name", () => {
  assert.equal(clean('{\\rtf1 {\\field{\\*\\fldinst {\\b INCLUDE}{PICTURE "http://x/a.png"}}{\\fldrslt r}}}'), "{\\rtf1 {\\field{\\*\\fldinst }{\\fldrslt r}}}");
  assert.equal(clean("{\\rtf1 {\\field{\\*\\fldinst \\'49NCLUDETEXT \"http://x/\"}{\\fldrslt r}}}"), "{\\rtf1 {\\field{\\*\\fldinst }{\\fldrslt r}}}");
  assert.equal(clean('{\\rtf1 {\\field{\\*\\fldinst \\u73?NCLUDETEXT "http://x/"}{\\fldrslt r}}}'), "{\\rtf1 {\\field{\\*\\fldinst }{\\fldrslt r}}}");
  assert.equal(
    clean('{\\rtf1 {\\field{\\*\\fldinst IF 1 = 1 {\\field{\\*\\fldinst INCLUDETEXT "http://x/"}{\\fldrslt a}} b}{\\fldrslt r}}}'),
    "{\\rtf1 {\\field{\\*\\fldinst IF 1 = 1 {\\field{\\*\\fldinst }{\\fldrslt a}} b}{\\fldrslt r}}}",
  );
});

test("other fields, text that merely mentions a field, and binary data are kept byte for byte", () => {
  const rtf = '{\\rtf1 INCLUDEPICTURE "http://x/" {\\field{\\*\\fldinst PAGE}{\\fldrslt 1}} {\\field{\\*\\fldinst HYPERLINK "http://x/"}{\\fldrslt link}} \\{\\}\\\'e9}';
  assert.equal(clean(rtf), rtf);
  const bytes = Buffer.from([...Buffer.from("{\\rtf1 \\bin2 "), 0xff, 0x7b, ...Buffer.from("}")]);
  assert.equal(neutralizeRtfFields(bytes), bytes);
});

test("fieldName: the instruction's first word, in capitals", () => {
  assert.equal(fieldName('  includePicture "a"'), "INCLUDEPICTURE");
  assert.equal(fieldName(""), "");
  assert.equal(fieldName('"quoted"'), "");
});
