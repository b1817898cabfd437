/**
 * An in-memory Lease store for tests of leader election and of whatever runs under it:
 * resourceVersions and 404/409 as the API server gives them, and per-candidate clients
 * that can be cut off to simulate a partition or a hung request.
 */
import type { Lease, LeaseClient } from './lease.js';
import { LeaseApiError } from './lease.js';

/** How a FakeLeaseClient answers right now. */
export type FakeLeaseClientMode = 'up' | 'failing' | 'hanging';

/** One candidate's view of a MemoryLeaseStore. */
export interface FakeLeaseClient extends LeaseClient {
  /** `up`: normal; `failing`: every call throws (no `.code`, as a network error); `hanging`: calls never settle unless aborted. */
  mode: FakeLeaseClientMode;
  /** Calls made through this client, e.g. `get`, `update 409`. */
  readonly calls: string[];
}

/** Leases by `namespace/name`, with a global resourceVersion counter like the store's revision. */
export class MemoryLeaseStore {
  private readonly leases = new Map<string, Lease>();
  private revision = 0;
  /** Called before an update is applied (after its conflict check); may write the store. */
  beforeUpdate?: (lease: Lease) => void;

  /** The stored Lease (a copy), or undefined. */
  peek(namespace: string, name: string): Lease | undefined {
    const l = this.leases.get(`${namespace}/${name}`);
    return l && structuredClone(l);
  }

  /** Writes `lease` as-is with a new resourceVersion, bypassing any check (another writer). */
  put(lease: Lease): Lease {
    const stored = structuredClone(lease);
    stored.metadata.resourceVersion = String(++this.revision);
    this.leases.set(`${lease.metadata.namespace}/${lease.metadata.name}`, stored);
    return structuredClone(stored);
  }

  /** A client over this store; each candidate gets its own so it can be cut off alone. */
  client(): FakeLeaseClient {
    const calls: string[] = [];
    const self: FakeLeaseClient = {
      mode: 'up',
      calls,
      get: (namespace, name, signal) =>
        this.answer(self, 'get', signal, () => {
          const l = this.peek(namespace, name);
          if (!l) throw new LeaseApiError(404, `leases "${name}" not found`, 'NotFound');
          return l;
        }),
      create: (lease, signal) =>
        this.answer(self, 'create', signal, () => {
          if (this.leases.has(`${lease.metadata.namespace}/${lease.metadata.name}`)) {
            throw new LeaseApiError(409, `leases "${lease.metadata.name}" already exists`, 'AlreadyExists');
          }
          return this.put(lease);
        }),
      update: (lease, signal) =>
        this.answer(self, 'update', signal, () => {
          const current = this.leases.get(`${lease.metadata.namespace}/${lease.metadata.name}`);
          if (!current) throw new LeaseApiError(404, `leases "${lease.metadata.name}" not found`, 'NotFound');
          const rv = lease.metadata.resourceVersion;
          if (rv !== undefined && rv !== current.metadata.resourceVersion) {
            throw new LeaseApiError(409, 'the object has been modified', 'Conflict');
          }
          this.beforeUpdate?.(lease);
          const now = this.leases.get(`${lease.metadata.namespace}/${lease.metadata.name}`)!;
          if (now.metadata.resourceVersion !== current.metadata.resourceVersion) {
            throw new LeaseApiError(409, 'the object has been modified', 'Conflict');
          }
          return this.put(lease);
        }),
    };
    return self;
  }

  /** Answers asynchronously (as a real request), honouring the client's mode and `signal`. */
  private answer(
    client: FakeLeaseClient,
    op: string,
    signal: AbortSignal | undefined,
    fn: () => Lease,
  ): Promise<Lease> {
    return new Promise<Lease>((resolve, reject) => {
      if (client.mode === 'hanging') {
        client.calls.push(`${op} hang`);
        signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        return;
      }
      queueMicrotask(() => {
        if (client.mode === 'failing') {
          client.calls.push(`${op} failed`);
          return reject(new Error('connect ECONNREFUSED'));
        }
        try {
          const result = fn();
          client.calls.push(op);
          resolve(result);
        } catch (err) {
          client.calls.push(`${op} ${(err as LeaseApiError).code}`);
          reject(err);
        }
      });
    });
  }
}
