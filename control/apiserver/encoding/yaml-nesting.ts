/**
 * The nesting depth of a YAML body, bounded before the YAML parser sees it: the parser
 * recurses once per level, so a 2 MiB body of `[[[[…` (or of `- - - - …` on one line)
 * overflows its stack and holds the event loop and gigabytes of memory while it tries.
 * JSON bodies are bounded by request.ts's byte scan; YAML needs its own tokenizer, since a
 * plain scalar may hold a quote (`name: it's`) that a byte scan would take for the start
 * of a string.
 *
 * The estimate walks the tokens of yaml's own Lexer (a state machine, no recursion) and
 * counts, at every token, the open flow collections (`[`, `{`) plus, on the current line,
 * the indentation width and the block indicators (`-`, `:`, `?`) seen so far. Each real
 * level of block nesting needs one more column of indentation or one more indicator, so
 * the count is never below the true depth; it overcounts indentation (two columns a level
 * in most manifests), which only matters for a manifest hundreds of levels deep.
 */
import { CST, Lexer } from 'yaml';

/**
 * Whether the YAML `text` may nest deeper than `limit` (see the file comment). Linear in
 * the text, stops at the first token past the limit.
 */
export function yamlNestingExceeds(text: string, limit: number): boolean {
  let flow = 0;
  let indent = 0;
  let indicators = 0;
  let lineStart = true;
  for (const token of new Lexer().lex(text)) {
    switch (CST.tokenType(token)) {
      case 'flow-map-start':
      case 'flow-seq-start':
        flow++;
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        flow = Math.max(0, flow - 1);
        break;
      case 'newline':
        lineStart = true;
        indent = 0;
        indicators = 0;
        continue;
      case 'space':
        if (lineStart) indent = token.length;
        break;
      case 'seq-item-ind':
      case 'map-value-ind':
      case 'explicit-key-ind':
        indicators++;
        break;
    }
    lineStart = false;
    if (flow + indent + indicators > limit) return true;
  }
  return false;
}
