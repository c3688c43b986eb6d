// The page imports the parser's ESM build, served beside it at /ui/eventsource-parser.js.
export * from 'eventsource-parser';
