/**
 * PodSpec defaults (pkg/apis/core/v1/defaults.go SetDefaults_PodSpec, _Container, _Probe,
 * _Volume, ...): `isPod` adds what Kubernetes applies to Pods only (SetDefaults_Pod).
 */
import type { Obj } from '../meta.js';
import {
  asObj,
  canonicalizeResourceList,
  child,
  defaultPointer,
  defaultString,
  defaultZero,
  eachObj,
  isObj,
  num,
  str,
} from '../meta.js';
import { setOwnValue } from '../../../../api/meta/maps.js';

/**
 * The pull policy Kubernetes defaults for an image (SetDefaults_Container with
 * parsers.ParseImageName): `Always` when the tag is `latest`, or when there is neither tag
 * nor digest (which means `latest`); otherwise `IfNotPresent` (`nginx:1.25`,
 * `nginx@sha256:...`).
 */
export function pullPolicyFor(image: string): 'Always' | 'IfNotPresent' {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const last = name.slice(name.lastIndexOf('/') + 1);
  const colon = last.indexOf(':');
  const tag = colon >= 0 ? last.slice(colon + 1) : at >= 0 ? '' : 'latest';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** The handler types of probes and lifecycle hooks (ProbeHandler / LifecycleHandler). */
export const HANDLER_TYPES = ['exec', 'httpGet', 'tcpSocket', 'grpc', 'sleep'] as const;

/** SetDefaults_HTTPGetAction (path `/`, scheme HTTP) and GRPCAction's `service: ""`. */
function defaultHandler(h: Obj): void {
  const http = asObj(h.httpGet);
  if (http) {
    defaultString(http, 'path', '/');
    defaultString(http, 'scheme', 'HTTP');
  }
  const grpc = asObj(h.grpc);
  if (grpc) defaultPointer(grpc, 'service', '');
}

/** SetDefaults_Probe: timeout 1 s, period 10 s, success 1, failure 3 (zero counts as unset). */
function defaultProbe(p: Obj): void {
  defaultZero(p, 'timeoutSeconds', 1);
  defaultZero(p, 'periodSeconds', 10);
  defaultZero(p, 'successThreshold', 1);
  defaultZero(p, 'failureThreshold', 3);
  defaultHandler(p);
}

/** ObjectFieldSelector's `apiVersion: v1` default. */
function defaultFieldRef(holder: Obj | undefined): void {
  const ref = asObj(holder?.fieldRef);
  if (ref) defaultString(ref, 'apiVersion', 'v1');
}

/**
 * SetDefaults_Container: pull policy from the tag, termination message path and policy,
 * port protocol TCP, probe and handler defaults, env fieldRef apiVersion, canonical
 * resource quantities, and `resources: {}` (a Go struct field, always serialized).
 */
function defaultContainer(c: Obj): void {
  if (str(c.imagePullPolicy) === '') c.imagePullPolicy = pullPolicyFor(str(c.image));
  defaultString(c, 'terminationMessagePath', '/dev/termination-log');
  defaultString(c, 'terminationMessagePolicy', 'File');
  eachObj(c.ports, (p) => defaultString(p, 'protocol', 'TCP'));
  eachObj(c.env, (e) => defaultFieldRef(asObj(e.valueFrom)));
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const p = asObj(c[probe]);
    if (p) defaultProbe(p);
  }
  const lifecycle = asObj(c.lifecycle);
  for (const hook of ['postStart', 'preStop']) {
    const h = asObj(lifecycle?.[hook]);
    if (h) defaultHandler(h);
  }
  const resources = child(c, 'resources');
  canonicalizeResourceList(resources, 'limits');
  canonicalizeResourceList(resources, 'requests');
}

/** Every volume source field of a v1.Volume (a volume sets exactly one). */
export const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
] as const;

/** 0644, the default mode of secret, configMap, downwardAPI and projected volumes. */
const DEFAULT_FILE_MODE = 420;

/**
 * SetDefaults_Volume and the volume source defaults: a volume without a source is an
 * `emptyDir: {}`; secret/configMap/downwardAPI/projected `defaultMode: 420`; hostPath
 * `type: ""`; projected serviceAccountToken `expirationSeconds: 3600`; downward API
 * fieldRefs `apiVersion: v1`; image volumes' pull policy from the reference.
 */
function defaultVolume(v: Obj): void {
  if (!VOLUME_SOURCES.some((k) => v[k] !== undefined && v[k] !== null)) v.emptyDir = {};
  for (const k of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const src = asObj(v[k]);
    if (src) defaultPointer(src, 'defaultMode', DEFAULT_FILE_MODE);
  }
  const hostPath = asObj(v.hostPath);
  if (hostPath) defaultPointer(hostPath, 'type', '');
  eachObj(asObj(v.downwardAPI)?.items, defaultFieldRef);
  eachObj(asObj(v.projected)?.sources, (s) => {
    const token = asObj(s.serviceAccountToken);
    if (token) defaultPointer(token, 'expirationSeconds', 3600);
    eachObj(asObj(s.downwardAPI)?.items, defaultFieldRef);
  });
  const image = asObj(v.image);
  if (image && str(image.pullPolicy) === '') {
    image.pullPolicy = pullPolicyFor(str(image.reference)) === 'Always' ? 'Always' : 'IfNotPresent';
  }
  const claimSpec = asObj(asObj(asObj(v.ephemeral)?.volumeClaimTemplate)?.spec);
  if (claimSpec) defaultPointer(claimSpec, 'volumeMode', 'Filesystem');
}

/**
 * The defaults of a PodSpec (SetDefaults_PodSpec: dnsPolicy ClusterFirst, restartPolicy
 * Always, securityContext {}, terminationGracePeriodSeconds 30, schedulerName
 * default-scheduler; plus every container, volume and probe default). With `isPod`, also
 * SetDefaults_Pod: requests default to limits for each resource with only a limit,
 * enableServiceLinks true, and with hostNetwork each container port's hostPort defaults
 * to its containerPort. The deprecated `serviceAccount` mirrors `serviceAccountName`
 * (v1 conversion). Idempotent.
 */
export function defaultPodSpec(spec: Obj, isPod: boolean): void {
  defaultString(spec, 'dnsPolicy', 'ClusterFirst');
  defaultString(spec, 'restartPolicy', 'Always');
  if (!isObj(spec.securityContext)) spec.securityContext = {};
  defaultPointer(spec, 'terminationGracePeriodSeconds', 30);
  defaultString(spec, 'schedulerName', 'default-scheduler');
  if (str(spec.serviceAccountName) === '' && str(spec.serviceAccount) !== '') {
    spec.serviceAccountName = spec.serviceAccount;
  }
  if (str(spec.serviceAccountName) !== '') spec.serviceAccount = spec.serviceAccountName;
  for (const key of ['containers', 'initContainers', 'ephemeralContainers'])
    eachObj(spec[key], defaultContainer);
  eachObj(spec.volumes, defaultVolume);
  if (!isPod) return;
  for (const key of ['containers', 'initContainers']) {
    eachObj(spec[key], (c) => {
      const resources = child(c, 'resources');
      const limits = asObj(resources.limits);
      if (!limits || Object.keys(limits).length === 0) return;
      const requests = child(resources, 'requests');
      for (const [k, v] of Object.entries(limits))
        if (!Object.hasOwn(requests, k)) setOwnValue(requests, k, v);
    });
  }
  defaultPointer(spec, 'enableServiceLinks', true);
  if (spec.hostNetwork === true) {
    for (const key of ['containers', 'initContainers']) {
      eachObj(spec[key], (c) =>
        eachObj(c.ports, (p) => {
          if (!num(p.hostPort)) p.hostPort = p.containerPort;
        }),
      );
    }
  }
}

/** The defaults of a PodTemplateSpec (`spec.template` of Deployments and ReplicaSets). */
export function defaultPodTemplate(template: Obj): void {
  defaultPodSpec(child(template, 'spec'), false);
}
