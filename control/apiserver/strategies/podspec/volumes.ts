/**
 * Validation of a PodSpec's volumes and of containers' volumeMounts (ValidateVolumes,
 * validateVolumeSource, ValidateVolumeMounts): names, one source each, file modes, paths;
 * the downward API's files and a projected volume's sources (validateDownwardAPIVolumeFile,
 * validateProjectionSources).
 */
import type { FieldError } from '../../../../api/meta/validation.js';
import {
  childPath,
  duplicate,
  forbidden,
  indexPath,
  invalid,
  notSupported,
  required,
} from '../../../../api/meta/validation.js';
import { asObj, eachObj, notFound, num, str, type Obj } from '../meta.js';
import { dnsLabel, localDescendingPath, localNonReservedPath } from './fields.js';
import { VOLUME_SOURCES } from './defaults.js';
import { quantityValue } from './containers.js';

const FILE_MODE_MSG = 'must be a number between 0 and 0777 (octal), both inclusive';

function fileMode(v: unknown, field: string): FieldError[] {
  const n = num(v);
  return n !== undefined && (n < 0 || n > 0o777) ? [invalid(field, n, FILE_MODE_MSG)] : [];
}

/** KeyToPath items of secret/configMap volumes: key and path required, path local. */
function keyToPathItems(items: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  eachObj(items, (it, i) => {
    const p = indexPath(field, i);
    if (str(it.key) === '') errs.push(required(childPath(p, 'key')));
    const path = str(it.path);
    if (path === '') errs.push(required(childPath(p, 'path')));
    else errs.push(...localNonReservedPath(path, childPath(p, 'path')));
    errs.push(...fileMode(it.mode, childPath(p, 'mode')));
  });
  return errs;
}

/** validVolumeDownwardAPIFieldPathExpressions (and the subscripted labels/annotations forms). */
const VOLUME_FIELD_PATHS = [
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
];
const VOLUME_RESOURCE_FIELDS = [
  'limits.cpu',
  'limits.ephemeral-storage',
  'limits.memory',
  'requests.cpu',
  'requests.ephemeral-storage',
  'requests.memory',
];

/** validateDownwardAPIVolumeFile: a local path, exactly one of fieldRef and resourceFieldRef, a mode. */
function downwardAPIFile(file: Obj, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const path = str(file.path);
  if (path === '') errs.push(required(childPath(field, 'path')));
  else errs.push(...localNonReservedPath(path, childPath(field, 'path')));
  const fieldRef = asObj(file.fieldRef);
  const resourceFieldRef = asObj(file.resourceFieldRef);
  if (fieldRef) {
    const fp = childPath(field, 'fieldRef');
    const fieldPath = str(fieldRef.fieldPath);
    if (str(fieldRef.apiVersion) === '') errs.push(required(childPath(fp, 'apiVersion')));
    else if (fieldPath === '') errs.push(required(childPath(fp, 'fieldPath')));
    else if (
      !/^metadata\.(labels|annotations)\['.*'\]$/.test(fieldPath) &&
      !VOLUME_FIELD_PATHS.includes(fieldPath)
    )
      errs.push(notSupported(childPath(fp, 'fieldPath'), fieldPath, VOLUME_FIELD_PATHS));
    if (resourceFieldRef)
      errs.push(
        invalid(field, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'),
      );
  } else if (resourceFieldRef) {
    const rp = childPath(field, 'resourceFieldRef');
    if (str(resourceFieldRef.containerName) === '') errs.push(required(childPath(rp, 'containerName')));
    const resource = str(resourceFieldRef.resource);
    if (resource === '') errs.push(required(childPath(rp, 'resource')));
    else if (!VOLUME_RESOURCE_FIELDS.includes(resource))
      errs.push(notSupported(childPath(rp, 'resource'), resource, VOLUME_RESOURCE_FIELDS));
  } else {
    errs.push(required(field, 'one of fieldRef and resourceFieldRef is required'));
  }
  errs.push(...fileMode(file.mode, childPath(field, 'mode')));
  return errs;
}

/**
 * validateProjectionSources: each source is exactly one of secret, configMap,
 * downwardAPI, serviceAccountToken; no two write the same path; a token lives at least
 * 10 minutes and at most 2^32 s, at a local path.
 */
function projectionSources(projected: Obj, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const paths = new Set<string>();
  const claim = (path: string, value: unknown): void => {
    if (path === '') return;
    if (paths.has(path)) errs.push(invalid(field, value, 'conflicting duplicate paths'));
    paths.add(path);
  };
  errs.push(...fileMode(projected.defaultMode, childPath(field, 'defaultMode')));
  eachObj(projected.sources, (src, i) => {
    const sp = indexPath(childPath(field, 'sources'), i);
    let count = 0;
    for (const kind of ['secret', 'configMap'] as const) {
      const ref = asObj(src[kind]);
      if (!ref) continue;
      count++;
      const p = childPath(sp, kind);
      if (str(ref.name) === '') errs.push(required(childPath(p, 'name')));
      errs.push(...keyToPathItems(ref.items, childPath(p, 'items')));
      eachObj(ref.items, (it) => claim(str(it.path), str(ref.name)));
    }
    const downward = asObj(src.downwardAPI);
    if (downward) {
      count++;
      const p = childPath(sp, 'downwardAPI');
      eachObj(downward.items, (file, j) => {
        errs.push(...downwardAPIFile(file, indexPath(childPath(p, 'items'), j)));
        claim(str(file.path), str(file.path));
      });
    }
    const token = asObj(src.serviceAccountToken);
    if (token) {
      count++;
      const p = childPath(sp, 'serviceAccountToken');
      const seconds = num(token.expirationSeconds) ?? 3600;
      if (seconds < 600)
        errs.push(
          invalid(
            childPath(p, 'expirationSeconds'),
            seconds,
            'may not specify a duration less than 10 minutes',
          ),
        );
      if (seconds > 2 ** 32)
        errs.push(
          invalid(
            childPath(p, 'expirationSeconds'),
            seconds,
            'may not specify a duration larger than 2^32 seconds',
          ),
        );
      const path = str(token.path);
      if (path === '') errs.push(required(childPath(p, 'path')));
      else errs.push(...localNonReservedPath(path, childPath(p, 'path')));
      claim(path, path);
    }
    if (count > 1) errs.push(forbidden(sp, 'may not specify more than 1 volume type per source'));
  });
  return errs;
}

const HOST_PATH_TYPES = [
  '',
  'BlockDevice',
  'CharDevice',
  'Directory',
  'DirectoryOrCreate',
  'File',
  'FileOrCreate',
  'Socket',
];

/** ValidateVolumes: names (DNS label, unique), exactly one source, common sources' fields. */
export function validateVolumes(volumes: unknown, field: string, names: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  eachObj(volumes, (vol, i) => {
    const p = indexPath(field, i);
    const name = str(vol.name);
    if (name === '') errs.push(required(childPath(p, 'name')));
    else errs.push(...dnsLabel(name, childPath(p, 'name')));
    if (names.has(name)) errs.push(duplicate(childPath(p, 'name'), name));
    names.add(name);
    const sources = VOLUME_SOURCES.filter((k) => vol[k] !== undefined && vol[k] !== null);
    if (sources.length === 0) errs.push(required(p, 'must specify a volume type'));
    for (const extra of sources.slice(1)) {
      errs.push(forbidden(childPath(p, extra), 'may not specify more than 1 volume type'));
    }
    const hostPath = asObj(vol.hostPath);
    if (hostPath) {
      if (str(hostPath.path) === '') errs.push(required(childPath(p, 'hostPath', 'path')));
      const type = hostPath.type;
      if (type !== undefined && type !== null && !HOST_PATH_TYPES.includes(str(type))) {
        errs.push(notSupported(childPath(p, 'hostPath', 'type'), type, HOST_PATH_TYPES));
      }
    }
    const secret = asObj(vol.secret);
    if (secret) {
      if (str(secret.secretName) === '') errs.push(required(childPath(p, 'secret', 'secretName')));
      errs.push(...fileMode(secret.defaultMode, childPath(p, 'secret', 'defaultMode')));
      errs.push(...keyToPathItems(secret.items, childPath(p, 'secret', 'items')));
    }
    const configMap = asObj(vol.configMap);
    if (configMap) {
      if (str(configMap.name) === '') errs.push(required(childPath(p, 'configMap', 'name')));
      errs.push(...fileMode(configMap.defaultMode, childPath(p, 'configMap', 'defaultMode')));
      errs.push(...keyToPathItems(configMap.items, childPath(p, 'configMap', 'items')));
    }
    const downwardAPI = asObj(vol.downwardAPI);
    if (downwardAPI) {
      const dp = childPath(p, 'downwardAPI');
      errs.push(...fileMode(downwardAPI.defaultMode, childPath(dp, 'defaultMode')));
      eachObj(downwardAPI.items, (file, j) =>
        errs.push(...downwardAPIFile(file, indexPath(childPath(dp, 'items'), j))),
      );
    }
    const projected = asObj(vol.projected);
    if (projected) errs.push(...projectionSources(projected, childPath(p, 'projected')));
    const pvc = asObj(vol.persistentVolumeClaim);
    if (pvc && str(pvc.claimName) === '')
      errs.push(required(childPath(p, 'persistentVolumeClaim', 'claimName')));
    const emptyDir = asObj(vol.emptyDir);
    if (emptyDir?.sizeLimit !== undefined)
      errs.push(...quantityValue('', emptyDir.sizeLimit, childPath(p, 'emptyDir', 'sizeLimit')));
  });
  return errs;
}

/** ValidateVolumeMounts: name of a pod volume, mountPath required and unique, subPath local. */
export function validateVolumeMounts(
  mounts: unknown,
  field: string,
  volumes: ReadonlySet<string>,
): FieldError[] {
  const errs: FieldError[] = [];
  const paths = new Set<string>();
  eachObj(mounts, (m, i) => {
    const p = indexPath(field, i);
    const name = str(m.name);
    if (name === '') errs.push(required(childPath(p, 'name')));
    if (!volumes.has(name)) errs.push(notFound(childPath(p, 'name'), name));
    const mountPath = str(m.mountPath);
    if (mountPath === '') errs.push(required(childPath(p, 'mountPath')));
    if (paths.has(mountPath)) errs.push(invalid(childPath(p, 'mountPath'), mountPath, 'must be unique'));
    paths.add(mountPath);
    if (str(m.subPath) !== '') errs.push(...localDescendingPath(str(m.subPath), childPath(p, 'subPath')));
  });
  return errs;
}
