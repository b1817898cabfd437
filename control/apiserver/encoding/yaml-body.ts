/**
 * YAML request bodies decoded as kube-apiserver decodes them: sigs.k8s.io/yaml over go-yaml
 * v2, which is YAML 1.1. So merge keys (`<<: *anchor`) are resolved, `yes`/`no`/`on`/`off`
 * (any case go-yaml knows) are booleans and `0777` is octal, where the `yaml` package's
 * YAML 1.2 default keeps the merge key as a key named `<<` and those words as strings. What
 * go-yaml v2 leaves a string into an `interface{}` stays a string here too: timestamps
 * (`2001-12-14`) and sexagesimal numbers (`22:22`), which the `yaml` package's 1.1 schema
 * would otherwise turn into Dates and numbers.
 */

import {
  parse,
  type DocumentOptions,
  type ParseOptions,
  type SchemaOptions,
  type Tags,
  type ToJSOptions,
} from 'yaml';

/** The 1.1 schema without the tags go-yaml v2 does not resolve for an untyped value. */
function goYamlV2Tags(tags: Tags): Tags {
  return tags.filter((t) => {
    if (typeof t === 'string') return true;
    return t.tag !== 'tag:yaml.org,2002:timestamp' && t.format !== 'TIME';
  });
}

/**
 * Parses one YAML document of a request body with go-yaml v2's (YAML 1.1) semantics.
 * @param body the body's text.
 * @param uniqueKeys whether a repeated map key is an error (the `yaml` package's option;
 *   the apply-patch decoder passes false, as before).
 * @returns the plain value (objects, arrays, strings, numbers, booleans, null).
 * @throws the `yaml` package's YAMLParseError for malformed text; callers turn it into a 400.
 */
export function parseYamlBody(body: string, uniqueKeys = true): unknown {
  const options: ParseOptions & DocumentOptions & SchemaOptions & ToJSOptions = {
    version: '1.1',
    merge: true,
    uniqueKeys,
    customTags: goYamlV2Tags,
  };
  return parse(body, options);
}
