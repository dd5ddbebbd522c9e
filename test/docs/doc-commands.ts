/**
 * The command lines a Markdown page shows in its code blocks (fenced, or indented by four
 * spaces), as shell words, one entry per simple command (a pipeline or `&&` list gives one
 * per part). A block with `$ ` prompts shows commands on those lines only, the rest being
 * their output; a block without prompts shows commands on every line. Comments (` # ...`),
 * line continuations and quotes are read the way a shell reads them; what the shell would
 * expand (`$(...)`, `$VAR`) is kept as written.
 */

export interface DocCommand {
  /** 1-based line of the page where the command starts. */
  readonly line: number;
  /** The command line as written (after the prompt; an inline span whole). */
  readonly text: string;
  /** Its words, quotes removed. */
  readonly words: readonly string[];
}

interface CodeLine {
  readonly line: number;
  readonly text: string;
}

const FENCE = /^\s*(```|~~~)/;
const INDENTED = /^( {4}|\t)/;

/** A page's code blocks, each as its lines (fence lines and the indentation left out), and its other lines. */
export function splitMarkdown(markdown: string): { blocks: CodeLine[][]; prose: CodeLine[] } {
  const blocks: CodeLine[][] = [];
  const prose: CodeLine[] = [];
  let fenced: CodeLine[] | undefined;
  let indented: CodeLine[] | undefined;
  let previousBlank = true;
  for (const [index, text] of markdown.split('\n').entries()) {
    const line = index + 1;
    if (fenced !== undefined) {
      if (FENCE.test(text)) {
        blocks.push(fenced);
        fenced = undefined;
      } else fenced.push({ line, text });
      continue;
    }
    if (FENCE.test(text)) {
      fenced = [];
      indented = undefined;
      continue;
    }
    if (INDENTED.test(text) && (indented !== undefined || previousBlank)) {
      if (indented === undefined) blocks.push((indented = []));
      indented.push({ line, text: text.replace(INDENTED, '') });
    } else {
      if (text.trim() !== '') indented = undefined;
      prose.push({ line, text });
    }
    previousBlank = text.trim() === '';
  }
  return { blocks, prose };
}

/** Shell words and operators of one command line; undefined where a quote is left open. */
export function splitShellWords(text: string): string[] | undefined {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < text.length) word += text.charAt(++i);
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (c === '\\' && i + 1 < text.length) word = (word ?? '') + text.charAt(++i);
    else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '#' && word === undefined) break;
    else if (c === '<' && /^<[^\s<>]+>/.test(text.slice(i))) {
      // A placeholder (`<command>`), not a redirection.
      const placeholder = /^<[^\s<>]+>/.exec(text.slice(i))?.[0] ?? c;
      word = (word ?? '') + placeholder;
      i += placeholder.length - 1;
    } else if (c === '<' || c === '>') {
      // A redirection (`< review.json`, `2>&1`): its operator is one word, its target the next.
      if (word !== undefined && !/^\d+$/.test(word)) words.push(word);
      const operator = /^[<>]+&?/.exec(text.slice(i))?.[0] ?? c;
      words.push(operator.startsWith('<') ? '<' : '>');
      word = undefined;
      i += operator.length - 1;
    } else if ('|&;'.includes(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
      const double = text.charAt(i + 1) === c && c !== ';';
      words.push(double ? c + c : c);
      if (double) i++;
    } else word = (word ?? '') + c;
  }
  if (quote !== undefined) return undefined;
  if (word !== undefined) words.push(word);
  return words;
}

const OPERATORS = new Set(['|', '||', '&', '&&', ';']);
const REDIRECTIONS = new Set(['<', '>']);

/** The simple commands of a list of words (split at `|`, `&&`, `||`, `;`, `&`; redirections left out). */
function simpleCommands(words: readonly string[]): string[][] {
  const commands: string[][] = [[]];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? '';
    if (OPERATORS.has(word)) commands.push([]);
    else if (REDIRECTIONS.has(word)) i++;
    else commands.at(-1)?.push(word);
  }
  return commands.filter((command) => command.length > 0);
}

/** A block's logical lines: continuations (`\` at the end) joined, prompts noted. */
function logicalLines(block: readonly CodeLine[]): Array<CodeLine & { prompted: boolean }> {
  const out: Array<CodeLine & { prompted: boolean }> = [];
  let pending: (CodeLine & { prompted: boolean }) | undefined;
  for (const { line, text } of block) {
    if (pending !== undefined) {
      pending = { ...pending, text: `${pending.text} ${text.trim()}` };
    } else {
      const prompted = /^\s*\$ /.test(text);
      pending = { line, text: prompted ? text.replace(/^\s*\$ /, '') : text, prompted };
    }
    if (pending.text.endsWith('\\')) pending = { ...pending, text: pending.text.slice(0, -1) };
    else {
      out.push(pending);
      pending = undefined;
    }
  }
  if (pending !== undefined) out.push(pending);
  return out;
}

/** The inline code spans of prose lines (a span may run over a line break), with their lines. */
export function findCodeSpans(prose: readonly CodeLine[]): CodeLine[] {
  const spans: CodeLine[] = [];
  let paragraph: CodeLine[] = [];
  const flush = (): void => {
    const first = paragraph[0];
    if (first === undefined) return;
    const text = paragraph.map((l) => l.text).join('\n');
    for (const match of text.matchAll(/(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g)) {
      const before = text.slice(0, match.index).split('\n').length - 1;
      spans.push({ line: first.line + before, text: (match[2] ?? '').replace(/\s+/g, ' ').trim() });
    }
    paragraph = [];
  };
  for (const line of prose) {
    const last = paragraph.at(-1);
    if (line.text.trim() === '' || (last !== undefined && last.line + 1 !== line.line)) flush();
    if (line.text.trim() !== '') paragraph.push(line);
  }
  flush();
  return spans;
}

/**
 * Every simple command the page shows, with the line it is on: in code blocks, and in inline
 * code spans (`conndrain agent --cleanup`), where a span is one command line.
 */
export function findDocCommands(markdown: string): DocCommand[] {
  const found: DocCommand[] = [];
  const { blocks, prose } = splitMarkdown(markdown);
  for (const span of findCodeSpans(prose)) {
    const words = splitShellWords(span.text);
    if (words === undefined) continue;
    for (const command of simpleCommands(words)) found.push({ line: span.line, text: span.text, words: command });
  }
  for (const block of blocks) {
    const lines = logicalLines(block);
    const prompts = lines.some((l) => l.prompted);
    for (const { line, text, prompted } of lines) {
      if (prompts && !prompted) continue;
      const words = splitShellWords(text);
      if (words === undefined) continue;
      for (const command of simpleCommands(words)) found.push({ line, text: text.trim(), words: command });
    }
  }
  return found;
}
