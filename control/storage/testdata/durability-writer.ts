/**
 * The child process of sqlite-durability.test.ts: a writer that gets killed with SIGKILL.
 *
 *   node --import tsx durability-writer.ts <database path> <round>
 *
 * Opens the sqlite store (synchronous=FULL, the default) and writes until killed, with
 * IN_FLIGHT writers at once so that group commit batches them: each writer creates
 * `/registry/configmaps/r<round>/w<writer>-<i>` with value `{"round","w","i","n":0}`,
 * and after every second create updates its previous key to `n: 1`. Only after a write's
 * promise resolves does it print `ack <key> <modRevision> <n>` on stdout; the test holds
 * the store to every line it read. Prints `ready` once the store is open.
 */
import { SqliteStore } from '../sqlite.js';

const IN_FLIGHT = 16;

const [path, round] = process.argv.slice(2);
if (!path || !round) throw new Error('usage: durability-writer.ts <database path> <round>');

const store = await SqliteStore.open({ path });
process.stdout.write('ready\n');

const ack = (key: string, revision: number, n: number): void => {
  process.stdout.write(`ack ${key} ${revision} ${n}\n`);
};

await Promise.all(
  Array.from({ length: IN_FLIGHT }, async (_, w) => {
    let previous: { key: string; modRevision: number; i: number } | undefined;
    for (let i = 0; ; i++) {
      const key = `/registry/configmaps/r${round}/w${w}-${i}`;
      const kv = await store.create(key, JSON.stringify({ round, w, i, n: 0 }));
      ack(kv.key, kv.modRevision, 0);
      if (previous && i % 2 === 1) {
        const { key: prevKey, modRevision, i: prevI } = previous;
        const updated = await store.update(
          prevKey,
          JSON.stringify({ round, w, i: prevI, n: 1 }),
          modRevision,
        );
        ack(updated.key, updated.modRevision, 1);
      }
      previous = { key: kv.key, modRevision: kv.modRevision, i };
    }
  }),
);
