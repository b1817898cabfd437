/**
 * Validation of a PodSpec's volumes and of containers' volumeMounts (ValidateVolumes,
 * validateVolumeSource, ValidateVolumeMounts): names, one source each, file modes, paths.
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
import { asObj, eachObj, notFound, num, str } from '../meta.js';
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
