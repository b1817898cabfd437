/**
 * The one way the network module changes the kernel: iproute2's `ip` and `bridge`, and
 * `iptables-restore`/`iptables`, run as programs. Behind this narrow type so that the
 * module's own logic (what to add, what to remove) is unit-tested with a fake that records
 * the calls, and the real programs are exercised by the simulated-host tests.
 */
import { execFile } from 'node:child_process';

/** What a command did: its exit code (0 = success) and output. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `file` with `args` (and `stdin`, when given); never rejects. */
export type HostCommand = (file: string, args: readonly string[], stdin?: string) => Promise<CommandResult>;

/**
 * Runs the real `file` with a deadline of `timeoutMs` (killed then, exit code 1 and the
 * error's message as stderr); never rejects.
 */
export function runProgram(
  file: string,
  args: readonly string[],
  opts: { stdin?: string; timeoutMs: number },
): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      [...args],
      { timeout: opts.timeoutMs, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({
          code,
          stdout: String(stdout),
          stderr: String(stderr || (err && !stderr ? err.message : '')),
        });
      },
    );
    child.stdin?.on('error', () => {});
    child.stdin?.end(opts.stdin ?? '');
  });
}

/** The real programs, with a 30 s deadline each. */
export const runHostCommand: HostCommand = (file, args, stdin) =>
  runProgram(file, args, { stdin, timeoutMs: 30_000 });

/**
 * Runs a command that must succeed.
 * @throws Error `<what>: <stderr>` when it exits non-zero.
 */
export async function mustRun(
  host: HostCommand,
  what: string,
  file: string,
  args: readonly string[],
  stdin?: string,
): Promise<string> {
  const r = await host(file, args, stdin);
  if (r.code !== 0) throw new Error(`${what}: ${file} ${args.join(' ')}: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}

/** Parses iproute2's `-j` output (`[]` for empty output). @throws Error for output that is not JSON. */
export function parseJSONList<T>(text: string): T[] {
  const t = text.trim();
  if (t === '') return [];
  return JSON.parse(t) as T[];
}
