/**
 * CycleState (pkg/scheduler/framework/cycle_state.go): what plugins compute for one pod in
 * one scheduling cycle (PreFilter → Filter, PreScore → Score) and the plugins that asked
 * to be skipped for it. Created per cycle and thrown away afterwards.
 */
import type { FilterPlugin } from './interface.js';

export class CycleState {
  private readonly data = new Map<string, unknown>();
  /** Plugins whose PreFilter returned Skip: their Filter is not run this cycle. */
  readonly skipFilterPlugins = new Set<string>();
  /** Plugins whose PreScore returned Skip: their Score is not run this cycle. */
  readonly skipScorePlugins = new Set<string>();
  /** The Filter plugins to run this cycle (set by PreFilter: the framework's minus the skipped). */
  filters: readonly FilterPlugin[] | undefined;

  write(key: string, value: unknown): void {
    this.data.set(key, value);
  }

  /** The value under `key` (the caller knows its type); undefined when nothing was written. */
  read<T>(key: string): T | undefined {
    return this.data.get(key) as T | undefined;
  }
}
