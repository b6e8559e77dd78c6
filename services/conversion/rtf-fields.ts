/**
 * Fields whose instruction names a file or URL to read: Word and LibreOffice
 * fetch it (INCLUDEPICTURE, INCLUDETEXT, IMPORT, LINK) or ask another program
 * for data (DDE, DDEAUTO).
 */
export const FETCHING_FIELDS: ReadonlySet<string> = new Set(["INCLUDEPICTURE", "INCLUDETEXT", "INCLUDE", "IMPORT", "LINK", "DDE", "DDEAUTO"]);

/** The field's name: the first word of its instruction, in capitals. */
export function fieldName(instruction: string): string {
  return /^\s*([^\s"\\]+)/.exec(instruction)?.[1]?.toUpperCase() ?? "";
}

/**
 * RTF with the instruction of every field that fetches (FETCHING_FIELDS)
 * emptied, `{\*\fldinst INCLUDEPICTURE "http://…"}` becoming `{\*\fldinst }`:
 * the field's last result (`\fldrslt`) stays as plain content. The
 * instruction is read as an RTF reader reads it, so `\'hh` and `\uN` escapes
 * and instructions split over groups do not hide a field's name. Everything
 * else is kept byte for byte.
 */
export function neutralizeRtfFields(rtf: Buffer): Buffer {
  const text = rtf.toString("latin1");
  /** Open groups: where the instruction starts (after `\fldinst`) when the group is one, and its text so far. */
  const groups: Array<{ instructionFrom?: number; text: string[] }> = [];
  const cuts: Array<[number, number]> = [];
  /** The innermost group collecting an instruction's text, if any. */
  const collecting = () => {
    for (let g = groups.length - 1; g >= 0; g--) if (groups[g].instructionFrom !== undefined) return groups[g];
    return undefined;
  };
  let skipFallback = 0;
  let unicodeSkip = 1;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "{") {
      groups.push({ text: [] });
      i++;
    } else if (c === "}") {
      const group = groups.pop();
      if (group?.instructionFrom !== undefined) {
        const instruction = group.text.join("");
        if (FETCHING_FIELDS.has(fieldName(instruction))) cuts.push([group.instructionFrom, i]);
        // an enclosing instruction (nested fields) sees the inner one's text too
        collecting()?.text.push(instruction);
      }
      i++;
    } else if (c === "\\") {
      const word = /^\\([a-zA-Z]{1,32})(-?\d{1,10})? ?/.exec(text.slice(i, i + 48));
      if (word) {
        const [all, name, parameter] = word;
        i += all.length;
        if (name === "fldinst" && groups.length > 0) {
          groups[groups.length - 1].instructionFrom = i;
        } else if (name === "bin" && parameter) {
          i += Math.max(0, Number(parameter)); // raw bytes
        } else if (name === "u" && parameter) {
          collecting()?.text.push(String.fromCharCode((Number(parameter) + 0x10000) % 0x10000));
          skipFallback = unicodeSkip;
        } else if (name === "uc" && parameter) {
          unicodeSkip = Number(parameter);
        } else if (name === "tab" || name === "line" || name === "par") {
          collecting()?.text.push(" ");
        }
        continue;
      }
      const next = text[i + 1] ?? "";
      if (next === "'") {
        const hex = text.slice(i + 2, i + 4);
        i += 4;
        if (skipFallback > 0) skipFallback--;
        else collecting()?.text.push(String.fromCharCode(parseInt(hex, 16) || 0));
      } else {
        // \\ \{ \} are their character; \~ \- \_ \* and the like are not text of an instruction
        if ("\\{}".includes(next)) collecting()?.text.push(next);
        else if (next === "~") collecting()?.text.push(" ");
        i += 2;
      }
    } else {
      if (c !== "\r" && c !== "\n") {
        if (skipFallback > 0) skipFallback--;
        else collecting()?.text.push(c);
      }
      i++;
    }
  }
  if (cuts.length === 0) return rtf;
  const kept: Buffer[] = [];
  let from = 0;
  for (const [start, end] of cuts.sort((a, b) => a[0] - b[0])) {
    if (start < from) continue; // inside a cut already made (nested fields)
    kept.push(rtf.subarray(from, start));
    from = end;
  }
  kept.push(rtf.subarray(from));
  return Buffer.concat(kept);
}
