/**
 * The house logger, shared by the control process and the agent: winston writing one JSON
 * object per line on stderr, so stdout stays free for what the CLI prints.
 */
import winston from 'winston';

/** Log levels the CLI's `--log-level` accepts, most severe first. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * A JSON-lines winston logger on stderr at `level`, with a timestamp on each line and
 * `defaultMeta` (e.g. `{ component: 'agent', node: 'n1' }`) merged into every line.
 */
export function createLogger(level: LogLevel, defaultMeta?: Record<string, string>): winston.Logger {
  return winston.createLogger({
    level,
    ...(defaultMeta ? { defaultMeta } : {}),
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'debug'] })],
  });
}

/**
 * Where components log: the four levels, each with a message and structured context. The
 * winston logger createLogger() returns fits, and so does any test double; code takes this
 * interface, never winston's own type, so only this file knows which library logs.
 */
export interface Logger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
  /** winston's: true when the logger drops everything. */
  silent?: boolean;
  /** winston's: whether a line at `level` would be written. */
  isLevelEnabled?(level: string): boolean;
}

/**
 * Whether `logger` would write a line at `level`: false for a silent logger or a level below
 * its threshold, true when the logger cannot say. For hot paths that would otherwise build
 * a line only to have it dropped.
 */
export function logsAt(logger: Logger, level: LogLevel): boolean {
  return logger.silent !== true && (logger.isLevelEnabled?.(level) ?? true);
}

/** A logger that writes nothing (tests). */
export function silentLogger(): winston.Logger {
  return winston.createLogger({ silent: true });
}
