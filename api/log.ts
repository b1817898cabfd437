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

/** A logger that writes nothing (tests). */
export function silentLogger(): winston.Logger {
  return winston.createLogger({ silent: true });
}
