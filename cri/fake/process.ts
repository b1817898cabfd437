/**
 * What a fake container or exec "does": the fake runtime reads a container's argv
 * (command + args) as a tiny shell program so that tests written for real images run
 * unchanged against it. Known commands, alone or in `sh -c 'a; b'` scripts:
 *
 *   echo [-n] WORDS... [>&2]   writes to stdout (or stderr)
 *   exit [N]                   ends the program with N (default: the last status)
 *   true | :  / false          status 0 / 1
 *   sleep SECONDS              waits that long on the runtime's clock (`infinity`: forever)
 *
 * Anything else (a server binary, `nc -l`, `httpd`, `while` loops, pipes, `$VAR`,
 * redirections other than `>&2`) is a program that runs until it is killed: a container
 * with no command at all runs until stopped, as a server image would. A program that
 * runs to its end exits with the status of its last command. A command under
 * `/nonexistent/` is a file the image does not have: the container cannot start
 * (commandNotFound).
 *
 * Running a program costs nothing while it waits: no timers unless it sleeps.
 */
import type { Clock } from '../../api/clock.js';

/** One step of a fake program. */
export type FakeStep =
  | { op: 'write'; stream: 'stdout' | 'stderr'; data: string }
  | { op: 'status'; code: number }
  | { op: 'sleep'; seconds: number }
  | { op: 'exit'; code?: number }
  /** Runs until killed (any command the fake does not know). */
  | { op: 'serve' };

const SERVE: FakeStep[] = [{ op: 'serve' }];

/**
 * Splits a shell script into statements of words, honouring single and double quotes and
 * backslash escapes; `;` and newlines end statements. Returns undefined when the script
 * uses any other shell syntax (pipes, `&&`, `$`, subshells, redirections but `>&2`).
 */
export function splitScript(script: string): string[][] | undefined {
  const statements: string[][] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  const endWord = (): void => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endStatement = (): void => {
    endWord();
    if (words.length > 0) statements.push(words);
    words = [];
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i] as string;
    if (c === "'") {
      const end = script.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word += script.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < script.length && script[j] !== '"'; j++) {
        const d = script[j] as string;
        if (d === '$' || d === '`') return undefined;
        if (d === '\\' && j + 1 < script.length && '"\\$`'.includes(script[j + 1] as string)) j++;
        word += script[j];
      }
      if (j >= script.length) return undefined;
      inWord = true;
      i = j;
    } else if (c === '\\' && i + 1 < script.length) {
      word += script[++i];
      inWord = true;
    } else if (c === ' ' || c === '\t') {
      endWord();
    } else if (c === ';' || c === '\n') {
      endStatement();
    } else if (c === '>' && script.startsWith('>&2', i) && !inWord) {
      words.push('>&2');
      i += 2;
    } else if (c === '1' && script.startsWith('1>&2', i) && !inWord) {
      words.push('>&2');
      i += 3;
    } else if ('|&<>$`()#{}*?[]~'.includes(c)) {
      return undefined;
    } else {
      word += c;
      inWord = true;
    }
  }
  endStatement();
  return statements;
}

function statementSteps(words: string[]): FakeStep[] | undefined {
  const [cmd = '', ...args] = words;
  const name = cmd.slice(cmd.lastIndexOf('/') + 1);
  switch (name) {
    case 'echo': {
      let stream: 'stdout' | 'stderr' = 'stdout';
      const rest = args.filter((a) => {
        if (a !== '>&2') return true;
        stream = 'stderr';
        return false;
      });
      const noNewline = rest[0] === '-n';
      const text = (noNewline ? rest.slice(1) : rest).join(' ') + (noNewline ? '' : '\n');
      return [{ op: 'write', stream, data: text }];
    }
    case 'exit': {
      if (args.length === 0) return [{ op: 'exit' }];
      const code = Number(args[0]);
      return Number.isInteger(code) ? [{ op: 'exit', code: ((code % 256) + 256) % 256 }] : undefined;
    }
    case 'true':
    case ':':
      return [{ op: 'status', code: 0 }];
    case 'false':
      return [{ op: 'status', code: 1 }];
    case 'sleep': {
      if (args[0] === 'infinity') return SERVE;
      const seconds = Number(args[0]);
      return args.length === 1 && Number.isFinite(seconds) && seconds >= 0
        ? [{ op: 'sleep', seconds }]
        : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * The steps of a container's or exec's argv (command followed by args). `sh -c SCRIPT`
 * runs SCRIPT; an empty argv or any unknown command serves forever.
 */
export function fakeProgram(argv: string[]): FakeStep[] {
  const [cmd = '', ...rest] = argv;
  const name = cmd.slice(cmd.lastIndexOf('/') + 1);
  let statements: string[][] | undefined;
  if ((name === 'sh' || name === 'bash' || name === 'ash') && rest[0] === '-c') {
    statements = rest[1] === undefined ? undefined : splitScript(rest[1]);
  } else if (argv.length > 0) {
    statements = [argv];
  }
  if (statements === undefined) return SERVE;
  const steps: FakeStep[] = [];
  for (const s of statements) {
    const more = statementSteps(s);
    if (more === undefined) return [...steps, ...SERVE];
    steps.push(...more);
  }
  return steps;
}

/**
 * What the OCI runtime says when the container's command is not in the image (runc's
 * words), or undefined when it is: commands under `/nonexistent/` are missing.
 */
export function commandNotFound(argv: readonly string[]): string | undefined {
  const cmd = argv[0] ?? '';
  if (!cmd.startsWith('/nonexistent/')) return undefined;
  return `unable to start container process: exec: ${JSON.stringify(cmd)}: stat ${cmd}: no such file or directory`;
}

/** Where a running fake program writes. */
export type FakeOutput = (stream: 'stdout' | 'stderr', data: string) => void;

/**
 * Runs `steps` on `clock`. Resolves with the exit code when the program ends; resolves
 * undefined as soon as `signal` aborts (the program was killed) — a serving program
 * resolves only then. Never rejects.
 */
export async function runFakeProgram(
  steps: readonly FakeStep[],
  out: FakeOutput,
  clock: Clock,
  signal: AbortSignal,
): Promise<number | undefined> {
  let status = 0;
  for (const step of steps) {
    if (signal.aborted) return undefined;
    switch (step.op) {
      case 'write':
        out(step.stream, step.data);
        status = 0;
        break;
      case 'status':
        status = step.code;
        break;
      case 'sleep':
        await clock.sleep(step.seconds * 1000, signal);
        status = 0;
        break;
      case 'exit':
        return step.code ?? status;
      case 'serve':
        await new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          else signal.addEventListener('abort', () => resolve(), { once: true });
        });
        return undefined;
    }
  }
  return signal.aborted ? undefined : status;
}
