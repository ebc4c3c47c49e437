/**
 * The channel's name and the bounds every message and drawing respects.
 *
 * The Python side checks the same bounds (ws_jupyter/live/model.py); the page checks them again,
 * since it is what draws the agent's content.
 */

/** The protocol version the kernel announces and the page answers. */
export const PROTOCOL = 1;
/** The comm target the kernel opens. */
export const TARGET = 'ws_jupyter.live';
/** Largest new source of one cell (UTF-8 bytes). */
export const MAX_SOURCE_BYTES = 1 << 20;
/** All new sources of one proposal together. */
export const MAX_PROPOSAL_BYTES = 4 << 20;
/** Edits in one proposal. */
export const MAX_EDITS = 200;
/** Cells one read returns. */
export const MAX_READ_CELLS = 500;
/** Cells one run asks for. */
export const MAX_RUN_CELLS = 50;
/** One output value sent to the kernel in a read (a larger image is named, not sent). */
export const MAX_OUTPUT_VALUE = 4 << 20;
/** All outputs of one read together. */
export const MAX_READ_OUTPUT_BYTES = 16 << 20;
/** Outputs the sandbox may put into one cell. */
export const MAX_SHOWN_OUTPUTS = 60;
/** Characters of one side of a diff that are compared line by line (larger: summarised). */
export const DIFF_MAX_CHARS = 200_000;
/** Lines of one diff drawn (the rest is counted). */
export const DIFF_MAX_LINES = 400;
/** Characters of one drawn line (the rest is cut). */
export const DIFF_MAX_LINE_CHARS = 400;
/** Proposals shown at once in one notebook (older pending ones must be decided first). */
export const MAX_OPEN_PROPOSALS = 20;
/** Ids, versions and other tokens. */
export const MAX_TOKEN = 128;
