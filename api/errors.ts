/**
 * One way to turn a thrown value into text for logs, events and statuses: JavaScript lets
 * any value be thrown, so `catch (err)` gives `unknown`.
 */

/** An Error's `message`, or any other thrown value as `String(value)`. Never throws. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
