import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/clock.js';
import {
  ControllerExpectations,
  EXPECTATIONS_TIMEOUT_MS,
  UIDTrackingControllerExpectations,
} from './expectations.js';

const KEY = 'default/web';

describe('ControllerExpectations', () => {
  it('is satisfied for a key it never heard of', () => {
    assert.equal(new ControllerExpectations().satisfiedExpectations(KEY), true);
  });

  const cases: Array<{
    name: string;
    run: (e: ControllerExpectations) => void;
    satisfied: boolean;
    add?: number;
    del?: number;
  }> = [
    {
      name: 'creations expected, none seen',
      run: (e) => e.expectCreations(KEY, 3),
      satisfied: false,
      add: 3,
    },
    {
      name: 'creations expected, some seen',
      run: (e) => {
        e.expectCreations(KEY, 3);
        e.creationObserved(KEY);
        e.creationObserved(KEY);
      },
      satisfied: false,
      add: 1,
    },
    {
      name: 'creations expected, all seen',
      run: (e) => {
        e.expectCreations(KEY, 2);
        e.creationObserved(KEY);
        e.creationObserved(KEY);
      },
      satisfied: true,
      add: 0,
    },
    {
      name: 'more seen than expected stays satisfied',
      run: (e) => {
        e.expectCreations(KEY, 1);
        e.creationObserved(KEY);
        e.creationObserved(KEY);
      },
      satisfied: true,
      add: -1,
    },
    {
      name: 'deletions expected, all seen',
      run: (e) => {
        e.expectDeletions(KEY, 2);
        e.deletionObserved(KEY);
        e.deletionObserved(KEY);
      },
      satisfied: true,
      del: 0,
    },
    {
      name: 'expectCreations replaces earlier deletions',
      run: (e) => {
        e.expectDeletions(KEY, 2);
        e.expectCreations(KEY, 1);
      },
      satisfied: false,
      add: 1,
      del: 0,
    },
    {
      name: 'raise after lower',
      run: (e) => {
        e.setExpectations(KEY, 1, 1);
        e.lowerExpectations(KEY, 1, 1);
        e.raiseExpectations(KEY, 0, 2);
      },
      satisfied: false,
      add: 0,
      del: 2,
    },
    {
      name: 'observations without expectations are ignored',
      run: (e) => {
        e.creationObserved(KEY);
        e.deletionObserved(KEY);
      },
      satisfied: true,
    },
    {
      name: 'deleted expectations are satisfied',
      run: (e) => {
        e.expectCreations(KEY, 5);
        e.deleteExpectations(KEY);
      },
      satisfied: true,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const e = new ControllerExpectations({ clock: new FakeClock() });
      c.run(e);
      assert.equal(e.satisfiedExpectations(KEY), c.satisfied);
      if (c.add !== undefined) assert.equal(e.getExpectations(KEY)?.add, c.add);
      if (c.del !== undefined) assert.equal(e.getExpectations(KEY)?.del, c.del);
    });
  }

  it('expires 5 minutes after being set, not before', async () => {
    const clock = new FakeClock();
    const e = new ControllerExpectations({ clock });
    e.expectCreations(KEY, 3);
    await clock.advance(EXPECTATIONS_TIMEOUT_MS);
    assert.equal(e.satisfiedExpectations(KEY), false, 'exactly at the timeout it still holds');
    // Lowering does not refresh the timestamp.
    e.creationObserved(KEY);
    await clock.advance(1);
    assert.equal(e.satisfiedExpectations(KEY), true);
    // Setting again starts a new period.
    e.expectCreations(KEY, 1);
    assert.equal(e.satisfiedExpectations(KEY), false);
  });

  it('keeps owners apart', () => {
    const e = new ControllerExpectations({ clock: new FakeClock() });
    e.expectCreations('default/a', 1);
    e.creationObserved('default/b');
    assert.equal(e.satisfiedExpectations('default/a'), false);
    assert.equal(e.satisfiedExpectations('default/b'), true);
  });
});

describe('UIDTrackingControllerExpectations', () => {
  it('counts each expected dependent once and ignores others', () => {
    const e = new UIDTrackingControllerExpectations({ clock: new FakeClock() });
    e.expectDeletions(KEY, ['default/p1', 'default/p2']);
    e.deletionObserved(KEY, 'default/p1'); // deletionTimestamp set
    e.deletionObserved(KEY, 'default/p1'); // then removed: already counted
    e.deletionObserved(KEY, 'default/other'); // not ours to count
    assert.equal(e.getExpectations(KEY)?.del, 1);
    assert.equal(e.satisfiedExpectations(KEY), false);
    assert.deepEqual([...(e.getUIDs(KEY) ?? [])], ['default/p2']);
    e.deletionObserved(KEY, 'default/p2');
    assert.equal(e.satisfiedExpectations(KEY), true);
  });

  it('expires like the counts and forgets everything on delete', async () => {
    const clock = new FakeClock();
    const e = new UIDTrackingControllerExpectations({ clock });
    e.expectDeletions(KEY, ['default/p1']);
    await clock.advance(EXPECTATIONS_TIMEOUT_MS + 1);
    assert.equal(e.satisfiedExpectations(KEY), true);
    e.deleteExpectations(KEY);
    assert.equal(e.getUIDs(KEY), undefined);
    assert.equal(e.getExpectations(KEY), undefined);
  });

  it('tracks creations as counts', () => {
    const e = new UIDTrackingControllerExpectations({ clock: new FakeClock() });
    e.expectCreations(KEY, 1);
    assert.equal(e.satisfiedExpectations(KEY), false);
    e.creationObserved(KEY);
    assert.equal(e.satisfiedExpectations(KEY), true);
  });
});
