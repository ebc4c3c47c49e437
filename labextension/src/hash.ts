/**
 * Cell versions: a short hash of what an edit may change (the cell's type and source).
 *
 * The agent quotes the version it read; an edit applies only while the cell still has it, so a
 * change the user made in between is never overwritten. Two FNV-1a lanes give 64 bits (16 hex
 * digits): a collision between a user's edit and the text it replaced is not a practical worry.
 */

function fnv1a(text: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** A stable digest of ``text`` (16 hex digits). */
export function digest(text: string): string {
  const a = fnv1a(text, 0x811c9dc5);
  const b = fnv1a(text, 0x2f3e5a71 ^ text.length);
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}

/** The version of a cell with this type and source. */
export function cellVersion(cellType: string, source: string): string {
  return digest(cellType + '\u0000' + source);
}

/** UTF-8 size of a string, without allocating its bytes. */
export function utf8Bytes(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      n += 1;
    } else if (c < 0x800) {
      n += 2;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      n += 4;
      i++;
    } else {
      n += 3;
    }
  }
  return n;
}
