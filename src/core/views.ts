/**
 * What the model can read of a stored artifact: its views (text by lines, search, a JSONPath query,
 * the text of a PDF page by page, the entries of a ZIP, an image's type and pixel size) and the
 * answers they give. The answers are the wire contract of GET /v1/artifacts/{id}/text, /search and
 * /query (docs/http-api.md); every answer carries `text`, what a model reads, within its budget.
 */

/** Which view of an artifact an answer comes from. */
export type ViewKind = 'text' | 'pdf' | 'zip' | 'image';

/** Where an answer came from, shared by every view answer. */
export interface ViewHead {
  id: string;
  mimeType: string;
  sizeBytes: number;
  filename?: string;
  view: ViewKind;
  /** PDF: the page this answer reads (1-based) and how many the document has. */
  page?: number;
  pageCount?: number;
  /** ZIP: the entry this answer reads (absent: the listing of entries). */
  entry?: string;
  /** What the model reads: the lines, numbered, and how to go on; never longer than the budget. */
  text: string;
}

export interface ReadOptions {
  /** First line, 1-based. Default 1. */
  offset?: number;
  /** Lines at most; the budget may give fewer. Default: as many as fit the budget. */
  limit?: number;
  /** Within line `offset`, the first character (1-based): continues a line too long for one answer. */
  column?: number;
  /** PDF: which page (1-based). Default 1. */
  page?: number;
  /** ZIP: which entry to read as text. Default: the listing of entries. */
  entry?: string;
  /** Characters the answer's `text` may take. Default and maximum: the service's view budget. */
  budget?: number;
}

export interface ReadAnswer extends ViewHead {
  /** The first line held (1-based). */
  offset: number;
  /** Where the first line starts when the answer continues a long line (1-based character). */
  column?: number;
  /** The lines held, without their line ends; the last may be cut (then nextColumn says where it goes on). */
  lines: string[];
  /** Lines in the whole view (the page, the entry, the listing, the artifact). */
  totalLines: number;
  /** The offset to continue with; null at the end of the view. */
  nextOffset: number | null;
  /** With nextOffset: the line was cut; continue at this character of it. */
  nextColumn?: number;
  /** Images: pixel size and a link for a person (never bytes). */
  width?: number;
  height?: number;
  url?: string;
}

export interface SearchOptions {
  pattern: string;
  /**
   * `pattern` is a regular expression (JavaScript syntax, run in linear time: no backreferences,
   * lookahead, or lookbehind with a capture group).
   */
  regex?: boolean;
  ignoreCase?: boolean;
  /** Lines shown before and after each match. Default 0, at most 20. */
  context?: number;
  /** Matching lines returned at most. Default 20, at most 500. */
  maxMatches?: number;
  /** Search from this line on (1-based): how to get the matches after the ones returned. */
  offset?: number;
  /** PDF: the page to search from (default 1); the search goes on to the last page. */
  page?: number;
  /** ZIP: search inside this entry (default: the listing). */
  entry?: string;
  budget?: number;
}

/** One line of a search answer: a match or a context line around one. */
export interface SearchLine {
  line: number;
  /** PDF: the page of this line (line numbers count within a page). */
  page?: number;
  text: string;
  match: boolean;
}

export interface SearchAnswer extends ViewHead {
  pattern: string;
  regex: boolean;
  ignoreCase: boolean;
  /** Matching lines from `offset` (or the start) to the end of the view. */
  totalMatches: number;
  /** Matching lines held in `lines`. */
  returnedMatches: number;
  /** Matches and their context, in order; a gap in `line` separates groups. */
  lines: SearchLine[];
  /** Search again from here (with `offset`, and `page` for a PDF) for the matches not returned; null when all were. */
  nextOffset: number | null;
  nextPage?: number;
  /**
   * A regex search leaves out lines over 65,536 characters (one exec cannot be interrupted): how many
   * were, and the first (with its page, in a PDF). A fixed-string search has no such limit.
   */
  longLinesSkipped?: { count: number; first: number; page?: number };
}

export interface QueryOptions {
  /** An RFC 9535 JSONPath, e.g. `$.issues[?@.number == 42].title`. */
  path: string;
  /** ZIP: query a JSON entry. */
  entry?: string;
  budget?: number;
}

export interface QueryMatch {
  /** The RFC 9535 normalized path of the value, e.g. `$['issues'][3]['title']`. */
  path: string;
  /** The value, cut to fit the budget (long strings end in a marker, long arrays and objects say how many were left out). */
  value: unknown;
  /** Present when the value was cut: what was left out, in words. */
  cut?: string;
}

export interface QueryAnswer extends ViewHead {
  path: string;
  /** Values the path selects in the whole document (with `totalIsLowerBound`, at least this many). */
  totalMatches: number;
  /**
   * Present (true) when the query stopped counting at the service's cap (100,000 nodes), so
   * `totalMatches` is a lower bound; narrow the path to count exactly.
   */
  totalIsLowerBound?: boolean;
  /** The values held (the first ones, in document order). */
  matches: QueryMatch[];
}
