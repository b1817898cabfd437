// The host's facts and usage (machine.ts), read from /proc as cAdvisor reads them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { hostMachine, parseMeminfo } from './machine.js';

describe('parseMeminfo', () => {
  it('reads the fields of /proc/meminfo in bytes, with or without a kB unit', () => {
    const m = parseMeminfo(
      [
        'MemTotal:       24684520 kB',
        'MemFree:        22000000 kB',
        'MemAvailable:   23682768 kB',
        'Active(anon):      12300 kB',
        'HugePages_Total:       0',
        'Hugepagesize:       2048 kB',
      ].join('\n'),
    );
    assert.equal(m.get('MemTotal'), 24684520 * 1024);
    assert.equal(m.get('MemAvailable'), 23682768 * 1024);
    assert.equal(m.get('Active(anon)'), 12300 * 1024);
    assert.equal(m.get('HugePages_Total'), 0);
    assert.equal(m.get('Hugepagesize'), 2048 * 1024);
    assert.equal(m.size, 6);
  });
});

describe('hostMachine', () => {
  it("reports this host's logical CPUs, MemTotal as capacity and MemAvailable as available memory", async () => {
    const machine = hostMachine(tmpdir());
    const [info, usage] = await Promise.all([machine.info(), machine.usage()]);
    const meminfo = parseMeminfo(readFileSync('/proc/meminfo', 'utf8'));
    assert.equal(info.cpuCores, cpus().length);
    assert.equal(info.memoryCapacityBytes, meminfo.get('MemTotal'));
    // MemAvailable moves between the two reads: the same order of magnitude is the check.
    const available = meminfo.get('MemAvailable')!;
    assert.ok(usage.memoryAvailableBytes > 0 && usage.memoryAvailableBytes <= info.memoryCapacityBytes);
    assert.ok(Math.abs(usage.memoryAvailableBytes - available) < info.memoryCapacityBytes / 10);
    assert.ok(usage.fsCapacityBytes > 0 && usage.pidMax > 0 && usage.pidsInUse > 0);
  });
});
