/**
 * Lease (coordination.k8s.io/v1): Kubernetes' ValidateLease / ValidateLeaseSpec. Node
 * heartbeats (`kube-node-lease`) and leader election write these every few seconds.
 */
import type { FieldError } from '../../../api/meta/validation.js';
import { forbidden, invalid, notSupported } from '../../../api/meta/validation.js';
import { asObj, defineStrategy, num, qualifiedName, section, str } from './meta.js';

/** The Kubernetes-defined coordinated-leader-election strategies. */
const LEASE_STRATEGIES = ['OldestEmulationVersion'];

/** MicroTime (RFC 3339 with microseconds) as Lease times carry it. */
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The Lease strategy: leaseDurationSeconds > 0, leaseTransitions >= 0, strategy a known or
 * domain-qualified name, preferredHolder only with a strategy, acquireTime/renewTime valid
 * MicroTimes (a decode error in Kubernetes). Defaults: `spec: {}` (a struct, always
 * serialized).
 */
export const leaseStrategy = defineStrategy({
  namespaced: true,
  allowCreateOnUpdate: true,
  kubeFinalizers: false,
  defaults(obj) {
    section(obj, 'spec');
  },
  validate(obj) {
    const spec = asObj(obj.spec) ?? {};
    const errs: FieldError[] = [];
    const duration = num(spec.leaseDurationSeconds);
    if (duration !== undefined && duration <= 0) {
      errs.push(invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
    }
    const transitions = num(spec.leaseTransitions);
    if (transitions !== undefined && transitions < 0) {
      errs.push(invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
    }
    const strategy = str(spec.strategy);
    if (spec.strategy !== undefined && spec.strategy !== null) {
      if (!strategy.includes('/')) {
        if (!LEASE_STRATEGIES.includes(strategy))
          errs.push(notSupported('spec.strategy', spec.strategy, LEASE_STRATEGIES));
      } else errs.push(...qualifiedName(strategy, 'spec.strategy'));
    }
    if (str(spec.preferredHolder) !== '' && strategy === '') {
      errs.push(forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
    }
    for (const key of ['acquireTime', 'renewTime']) {
      const t = spec[key];
      if (
        t !== undefined &&
        t !== null &&
        (typeof t !== 'string' || !MICRO_TIME.test(t) || Number.isNaN(Date.parse(t)))
      ) {
        errs.push(
          invalid(
            `spec.${key}`,
            t,
            'must be an RFC 3339 time with microseconds (e.g. 2006-01-02T15:04:05.000000Z)',
          ),
        );
      }
    }
    return errs;
  },
});
