// The host's facts and usage (machine.ts), as the agent reports them: systeminformation's
// CPU and memory figures, which read /proc as cAdvisor does.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
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

  it('loads systeminformation on the first probe, and only its cpu and memory modules', () => {
    // A child: its module cache is its own.
    const script = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const loaded = () => Object.keys(require.cache).filter((f) => f.includes('/node_modules/systeminformation/lib/')).map((f) => f.split('/lib/')[1]).sort();
const { hostMachine, primaryIPv4 } = await import(${JSON.stringify(fileURLToPath(new URL('./machine.ts', import.meta.url)))});
await primaryIPv4();
const before = loaded();
const info = await hostMachine(${JSON.stringify(tmpdir())}).info();
console.log(JSON.stringify({ before, after: loaded(), cores: info.cpuCores }));
`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      cwd: fileURLToPath(new URL('.', import.meta.url)),
    });
    const { before, after, cores } = JSON.parse(out.trim().split('\n').at(-1)!) as {
      before: string[];
      after: string[];
      cores: number;
    };
    assert.deepEqual(before, [], 'primaryIPv4 alone loads none of it');
    assert.deepEqual(after, ['cpu.js', 'memory.js', 'util.js']);
    assert.equal(cores, cpus().length);
  });
});
