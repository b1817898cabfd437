// Preloaded into a child Node process (NODE_OPTIONS="--import <this file>") by benchmark
// scripts that profile a process they start but cannot pass `--cpu-prof` to (NODE_OPTIONS
// refuses it): starts V8's CPU profiler at once and, when the process exits, writes the
// profile to $K8TS_CPU_PROF_DIR/<pid>.cpuprofile (open it in Chrome DevTools or speedscope).
// The exit handler is synchronous: the in-process inspector session answers at once.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import process from 'node:process';

const dir = process.env.K8TS_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
