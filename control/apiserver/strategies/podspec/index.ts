/**
 * PodSpec defaults and validation, shared by Pods and by the pod templates of
 * Deployments and ReplicaSets (Kubernetes' pkg/apis/core/v1/defaults.go
 * SetDefaults_PodSpec/Container/Probe/Volume/..., and pkg/apis/core/validation
 * ValidatePodSpec / ValidatePodTemplateSpec).
 *
 * This file validates a PodSpec and a pod template; the parts are one concern per file:
 * defaults.ts, qos.ts, volumes.ts, containers.ts, tolerations.ts, and fields.ts (shared
 * small rules).
 *
 * `isPod` separates what Kubernetes applies to Pods only: SetDefaults_Pod (requests from
 * limits, enableServiceLinks, hostNetwork hostPorts) and the image-whitespace rule of
 * ValidatePodCreate. Templates keep exactly what `kubectl get deploy -o yaml` shows.
 */
import type { FieldError } from '../../../../api/meta/validation.js';
import {
  childPath,
  duplicate,
  forbidden,
  indexPath,
  invalid,
  isInRange,
  required,
  validateAnnotations,
  validateLabels,
} from '../../../../api/meta/validation.js';
import type { Obj } from '../meta.js';
import { asObj, eachObj, list, num, problems, qualifiedName, str, strMap } from '../meta.js';
import { enumField, dnsLabel, dnsSubdomain } from './fields.js';
import { validatePodDNSConfig } from './dns.js';
import { validateVolumes } from './volumes.js';
import { validateContainer } from './containers.js';
import { validateTolerations } from './tolerations.js';

export { defaultPodSpec, defaultPodTemplate, pullPolicyFor } from './defaults.js';
export { podQOSClass } from './qos.js';
export type { PodQOSClass } from './qos.js';
export { enumField } from './fields.js';
export { taintEffect, validateTolerations } from './tolerations.js';

/**
 * ValidatePodSpec (`path` is `spec` for Pods, `spec.template.spec` for templates):
 * volumes, containers (at least one) and init containers, unique hostPorts, restartPolicy,
 * dnsPolicy and dnsConfig (dns.ts), nodeSelector labels, serviceAccountName, nodeName,
 * priorityClassName and schedulerName (DNS subdomains), hostname/subdomain (DNS labels),
 * activeDeadlineSeconds (1..2^31-1), tolerations, hostNetwork ports. `pod` is given for
 * Pods (not templates); on create, ephemeral containers are forbidden and so is a
 * nodeName while schedulingGates remain.
 */
export function validatePodSpec(spec: Obj, path: string, pod?: { create: boolean }): FieldError[] {
  const isPod = pod !== undefined;
  const errs: FieldError[] = [];
  const volumes = new Set<string>();
  errs.push(...validateVolumes(spec.volumes, childPath(path, 'volumes'), volumes));

  const containersPath = childPath(path, 'containers');
  const containers = list(spec.containers);
  if (containers.length === 0) errs.push(required(containersPath));
  const names = new Set<string>();
  eachObj(containers, (c, i) =>
    errs.push(...validateContainer(c, indexPath(containersPath, i), 'container', names, volumes, isPod)),
  );
  eachObj(spec.initContainers, (c, i) =>
    errs.push(
      ...validateContainer(c, indexPath(childPath(path, 'initContainers'), i), 'init', names, volumes, isPod),
    ),
  );

  // checkHostPortConflicts: protocol/hostIP/hostPort unique across the (regular) containers.
  const hostPorts = new Set<string>();
  eachObj(containers, (c, i) =>
    eachObj(c.ports, (port, j) => {
      const hostPort = num(port.hostPort) ?? 0;
      if (hostPort === 0) return;
      const key = `${str(port.protocol)}/${str(port.hostIP)}/${hostPort}`;
      const p = childPath(indexPath(childPath(indexPath(containersPath, i), 'ports'), j), 'hostPort');
      if (hostPorts.has(key)) errs.push(duplicate(p, key));
      hostPorts.add(key);
      if (spec.hostNetwork === true && hostPort !== num(port.containerPort)) {
        errs.push(
          invalid(
            childPath(indexPath(childPath(indexPath(containersPath, i), 'ports'), j), 'containerPort'),
            port.containerPort ?? 0,
            'must match `hostPort` when `hostNetwork` is true',
          ),
        );
      }
    }),
  );

  errs.push(
    ...enumField(spec.restartPolicy, childPath(path, 'restartPolicy'), ['Always', 'OnFailure', 'Never']),
  );
  errs.push(
    ...enumField(spec.dnsPolicy, childPath(path, 'dnsPolicy'), [
      'ClusterFirstWithHostNet',
      'ClusterFirst',
      'Default',
      'None',
    ]),
  );
  errs.push(...validatePodDNSConfig(spec.dnsConfig, spec.dnsPolicy, childPath(path, 'dnsConfig')));
  errs.push(...validateLabels(strMap(spec.nodeSelector), childPath(path, 'nodeSelector')));
  for (const key of ['serviceAccountName', 'nodeName', 'priorityClassName', 'schedulerName']) {
    const v = str(spec[key]);
    if (v !== '') errs.push(...dnsSubdomain(v, childPath(path, key)));
  }
  for (const key of ['hostname', 'subdomain']) {
    const v = str(spec[key]);
    if (v !== '') errs.push(...dnsLabel(v, childPath(path, key)));
  }
  const deadline = num(spec.activeDeadlineSeconds);
  if (deadline !== undefined) {
    errs.push(
      ...problems(childPath(path, 'activeDeadlineSeconds'), deadline, isInRange(deadline, 1, 2147483647)),
    );
  }
  errs.push(...validateTolerations(spec.tolerations, childPath(path, 'tolerations')));
  eachObj(spec.imagePullSecrets, (s, i) => {
    const extra = Object.keys(s).filter((k) => k !== 'name');
    if (extra.length > 0)
      errs.push(invalid(indexPath(childPath(path, 'imagePullSecrets'), i), s, 'only name may be set'));
  });
  if (pod?.create) {
    if (list(spec.ephemeralContainers).length > 0) {
      errs.push(forbidden(childPath(path, 'ephemeralContainers'), 'cannot be set on create'));
    }
    if (str(spec.nodeName) !== '' && list(spec.schedulingGates).length > 0) {
      errs.push(
        forbidden(childPath(path, 'nodeName'), 'cannot be set until all schedulingGates have been cleared'),
      );
    }
  }
  eachObj(spec.schedulingGates, (g, i) => {
    errs.push(
      ...qualifiedName(str(g.name), childPath(indexPath(childPath(path, 'schedulingGates'), i), 'name')),
    );
  });
  return errs;
}

/**
 * ValidatePodTemplateSpec at `path` (`spec.template`): template labels and annotations
 * (reported on `spec.template.metadata.*`, the fields' real paths, where Kubernetes
 * writes `spec.template.labels`), the PodSpec, and no ephemeral containers.
 */
export function validatePodTemplate(template: Obj, path: string): FieldError[] {
  const meta = asObj(template.metadata) ?? {};
  const specPath = childPath(path, 'spec');
  const spec = asObj(template.spec) ?? {};
  const errs = [
    ...validateLabels(strMap(meta.labels), childPath(path, 'metadata', 'labels')),
    ...validateAnnotations(strMap(meta.annotations), childPath(path, 'metadata', 'annotations')),
    ...validatePodSpec(spec, specPath),
  ];
  if (list(spec.ephemeralContainers).length > 0) {
    errs.push(
      forbidden(
        childPath(specPath, 'ephemeralContainers'),
        'ephemeral containers not allowed in pod template',
      ),
    );
  }
  return errs;
}
