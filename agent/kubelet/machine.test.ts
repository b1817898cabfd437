// The host's facts and usage (machine.ts), as the agent reports them: systeminformation's
// CPU and memory figures, which read /proc as cAdvisor does.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { hostMachine } from './machine.js';

/** A `kB` field of /proc/meminfo, in bytes. */
function meminfo(field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync('/proc/meminfo', 'utf8'));
  assert.ok(m, `${field} in /proc/meminfo`);
  return Number(m[1]) * 1024;
}

describe('hostMachine', () => {
  it("reports this host's CPUs, MemTotal as capacity and MemAvailable as available memory", async () => {
    const machine = hostMachine(tmpdir());
    const [info, usage] = await Promise.all([machine.info(), machine.usage()]);
    assert.equal(info.cpuCores, cpus().length);
    assert.equal(info.memoryCapacityBytes, meminfo('MemTotal'));
    // MemAvailable moves between the two reads: the same order of magnitude is the check.
    assert.ok(usage.memoryAvailableBytes > 0 && usage.memoryAvailableBytes <= info.memoryCapacityBytes);
    assert.ok(Math.abs(usage.memoryAvailableBytes - meminfo('MemAvailable')) < info.memoryCapacityBytes / 10);
    assert.ok(usage.fsCapacityBytes > 0 && usage.pidMax > 0 && usage.pidsInUse > 0);
  });
});
