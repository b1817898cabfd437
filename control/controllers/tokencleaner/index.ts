/**
 * The token cleaner (`tokencleaner`): deletes expired bootstrap tokens' Secrets. See
 * controller.ts.
 */
import type { ControllerFactory } from '../context.js';
import { TokenCleaner } from './controller.js';

export { TokenCleaner, timeLeftMs } from './controller.js';

/** Builds the `tokencleaner` controller from the shared context. */
export const tokenCleanerController: ControllerFactory = (ctx) => new TokenCleaner(ctx);
