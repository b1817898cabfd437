/**
 * `/openapi/v2` in its protobuf form: the Swagger 2.0 document of v2.ts encoded as
 * gnostic's `openapi.v2.Document` (github.com/google/gnostic-models, openapiv2/OpenAPIv2.proto),
 * which is what client-go's `OpenAPISchema()` asks for (Accept
 * `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`) and kube-openapi's
 * `proto.NewOpenAPIData` and kubectl's QueryParamVerifier read. kubectl falls back to it
 * when the OpenAPI v3 index has no document for a manifest's group-version (an unknown
 * kind, `kubectl apply --validate`), and fails the command when it cannot get it.
 *
 * kube-apiserver builds these bytes by parsing its JSON document with gnostic's compiler
 * (`openapi_v2.ParseDocument`) and marshalling the result (kube-openapi handler.go
 * `ToProtoBinary`); toGnosticDocument() makes the same mapping from JSON to messages:
 * - JSON maps become ordered lists of `Named*` pairs (`{name, value}`), in key order;
 * - `$ref` → `_ref`; `type` → `TypeItem {value: [type]}`; `items` → `ItemsItem {schema: [s]}`;
 *   `additionalProperties` → `AdditionalPropertiesItem {schema}`; `properties` →
 *   `Properties {additional_properties: [NamedSchema]}`;
 * - every `x-…` key (`x-kubernetes-group-version-kind`, `-patch-strategy`, `-action`, ...)
 *   → `vendor_extension: [NamedAny {name, value: Any {yaml}}]`, the value as YAML text (gnostic
 *   keeps unknown extensions as YAML; kube-openapi's `VendorExtensionToMap` and kubectl's
 *   `hasGVKExtension` yaml-unmarshal it);
 * - a parameter is `ParametersItem {parameter: Parameter {body_parameter | non_body_parameter:
 *   NonBodyParameter {query_parameter_sub_schema | path_parameter_sub_schema}}}` by its `in`;
 * - a response is `NamedResponseValue {name: code, value: ResponseValue {response: Response
 *   {description, schema: SchemaItem {schema}}}}`;
 * - `securityDefinitions` entries of `type: apiKey` → `SecurityDefinitionsItem {api_key_security}`.
 * Zero values (false, empty strings and lists) are left out, as Go's proto.Marshal does.
 *
 * The messages are defined with protobufjs from OPENAPI_V2_PROTO: the subset of
 * OpenAPIv2.proto that these documents use, with its field numbers; decoders skip what
 * they do not know, and this document never carries the rest (headers, form data, OAuth).
 */
import { createRequire } from 'node:module';
import type protobufjs from 'protobufjs';
import { stringify as yamlStringify } from 'yaml';
import type { OpenAPIV2Document, OperationV2, ParameterV2, PathItemV2, SchemaObject } from './documents.js';

/** The Content-Type kube-apiserver answers the protobuf form with (for both Accept spellings). */
export const CONTENT_TYPE_OPENAPI_V2_PROTOBUF_RESPONSE =
  'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/**
 * The messages of package `openapi.v2` (gnostic's OpenAPIv2.proto) this encoder writes, with
 * upstream's names and field numbers; fields it never writes are left out.
 */
export const OPENAPI_V2_PROTO = `
syntax = "proto3";
package openapi.v2;

message Document {
  string swagger = 1;
  Info info = 2;
  Paths paths = 8;
  Definitions definitions = 9;
  repeated SecurityRequirement security = 12;
  SecurityDefinitions security_definitions = 13;
  repeated NamedAny vendor_extension = 16;
}
message Info {
  string title = 1;
  string version = 2;
  string description = 3;
}
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }

message Paths {
  repeated NamedAny vendor_extension = 1;
  repeated NamedPathItem path = 2;
}
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem {
  string _ref = 1;
  Operation get = 2;
  Operation put = 3;
  Operation post = 4;
  Operation delete = 5;
  Operation options = 6;
  Operation head = 7;
  Operation patch = 8;
  repeated ParametersItem parameters = 9;
  repeated NamedAny vendor_extension = 10;
}
message Operation {
  repeated string tags = 1;
  string summary = 2;
  string description = 3;
  string operation_id = 5;
  repeated string produces = 6;
  repeated string consumes = 7;
  repeated ParametersItem parameters = 8;
  Responses responses = 9;
  repeated string schemes = 10;
  bool deprecated = 11;
  repeated NamedAny vendor_extension = 13;
}
message ParametersItem {
  oneof oneof {
    Parameter parameter = 1;
    JsonReference json_reference = 2;
  }
}
message JsonReference { string _ref = 1; string description = 2; }
message Parameter {
  oneof oneof {
    BodyParameter body_parameter = 1;
    NonBodyParameter non_body_parameter = 2;
  }
}
message BodyParameter {
  string description = 1;
  string name = 2;
  string in = 3;
  bool required = 4;
  Schema schema = 5;
  repeated NamedAny vendor_extension = 6;
}
message NonBodyParameter {
  oneof oneof {
    QueryParameterSubSchema query_parameter_sub_schema = 3;
    PathParameterSubSchema path_parameter_sub_schema = 4;
  }
}
message QueryParameterSubSchema {
  bool required = 1;
  string in = 2;
  string description = 3;
  string name = 4;
  string type = 6;
  string format = 7;
  bool unique_items = 20;
  repeated NamedAny vendor_extension = 23;
}
message PathParameterSubSchema {
  bool required = 1;
  string in = 2;
  string description = 3;
  string name = 4;
  string type = 5;
  string format = 6;
  bool unique_items = 19;
  repeated NamedAny vendor_extension = 22;
}
message Responses {
  repeated NamedResponseValue response_code = 1;
  repeated NamedAny vendor_extension = 2;
}
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message ResponseValue {
  oneof oneof {
    Response response = 1;
    JsonReference json_reference = 2;
  }
}
message Response {
  string description = 1;
  SchemaItem schema = 2;
  repeated NamedAny vendor_extension = 5;
}
message SchemaItem {
  oneof oneof {
    Schema schema = 1;
  }
}

message Definitions { repeated NamedSchema additional_properties = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Schema {
  string _ref = 1;
  string format = 2;
  string title = 3;
  string description = 4;
  repeated string required = 19;
  AdditionalPropertiesItem additional_properties = 21;
  TypeItem type = 22;
  ItemsItem items = 23;
  repeated Schema all_of = 24;
  Properties properties = 25;
  repeated NamedAny vendor_extension = 31;
}
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message Properties { repeated NamedSchema additional_properties = 1; }
message AdditionalPropertiesItem {
  oneof oneof {
    Schema schema = 1;
    bool boolean = 2;
  }
}

message SecurityRequirement { repeated NamedStringArray additional_properties = 1; }
message NamedStringArray { string name = 1; StringArray value = 2; }
message StringArray { repeated string value = 1; }
message SecurityDefinitions { repeated NamedSecurityDefinitionsItem additional_properties = 1; }
message NamedSecurityDefinitionsItem { string name = 1; SecurityDefinitionsItem value = 2; }
message SecurityDefinitionsItem {
  oneof oneof {
    ApiKeySecurity api_key_security = 2;
  }
}
message ApiKeySecurity {
  string type = 1;
  string name = 2;
  string in = 3;
  string description = 4;
  repeated NamedAny vendor_extension = 5;
}
`;

/** A message as a plain object with the .proto's field names (protobufjs `fromObject` input). */
type Message = Record<string, unknown>;

let documentType: protobufjs.Type | undefined;

function gnosticDocumentType(): protobufjs.Type {
  // Required on the first protobuf request (kubectl seldom asks for it), not imported at
  // the top: a server that is never asked does not hold protobufjs.
  documentType ??= (createRequire(import.meta.url)('protobufjs') as typeof protobufjs)
    .parse(OPENAPI_V2_PROTO, { keepCase: true })
    .root.lookupType('openapi.v2.Document');
  return documentType;
}

/** Sets `key` on `m` unless `value` is a zero value (undefined, false, "", []). */
function put(m: Message, key: string, value: unknown): void {
  if (value === undefined || value === false || value === '') return;
  if (Array.isArray(value) && value.length === 0) return;
  m[key] = value;
}

/** The `x-…` keys of a JSON object as gnostic's vendor extensions (YAML text values). */
function vendorExtensions(obj: object): Message[] {
  return Object.entries(obj)
    .filter(([k, v]) => k.startsWith('x-') && v !== undefined)
    .map(([name, value]) => ({ name, value: { yaml: yamlStringify(value) } }));
}

function schemaMessage(s: SchemaObject): Message {
  if (s.oneOf) {
    // Swagger 2.0 has no oneOf (gnostic rejects it); the v2 rendering never writes one.
    throw new Error('openapi v2: a schema with oneOf has no Swagger 2.0 (gnostic) form');
  }
  const m: Message = {};
  put(m, '_ref', s.$ref);
  put(m, 'format', s.format);
  put(m, 'description', s.description);
  put(m, 'required', s.required);
  if (s.additionalProperties) m['additional_properties'] = { schema: schemaMessage(s.additionalProperties) };
  if (s.type) m['type'] = { value: [s.type] };
  if (s.items) m['items'] = { schema: [schemaMessage(s.items)] };
  put(m, 'all_of', s.allOf?.map(schemaMessage));
  if (s.properties) m['properties'] = { additional_properties: namedSchemas(s.properties) };
  put(m, 'vendor_extension', vendorExtensions(s));
  return m;
}

function namedSchemas(schemas: Record<string, SchemaObject>): Message[] {
  return Object.entries(schemas).map(([name, s]) => ({ name, value: schemaMessage(s) }));
}

function parameterMessage(p: ParameterV2): Message {
  if (p.in === 'body') {
    const body: Message = {};
    put(body, 'description', p.description);
    put(body, 'name', p.name);
    put(body, 'in', p.in);
    put(body, 'required', p.required);
    if (p.schema) body['schema'] = schemaMessage(p.schema);
    return { parameter: { body_parameter: body } };
  }
  const sub: Message = {};
  put(sub, 'required', p.required);
  put(sub, 'in', p.in);
  put(sub, 'description', p.description);
  put(sub, 'name', p.name);
  put(sub, 'type', p.type);
  put(sub, 'unique_items', p.uniqueItems);
  const key = p.in === 'query' ? 'query_parameter_sub_schema' : 'path_parameter_sub_schema';
  return { parameter: { non_body_parameter: { [key]: sub } } };
}

function operationMessage(o: OperationV2): Message {
  const m: Message = {};
  put(m, 'tags', o.tags);
  put(m, 'description', o.description);
  put(m, 'operation_id', o.operationId);
  put(m, 'produces', o.produces);
  put(m, 'consumes', o.consumes);
  put(m, 'parameters', o.parameters.map(parameterMessage));
  m['responses'] = {
    response_code: Object.entries(o.responses).map(([code, r]) => {
      const response: Message = {};
      put(response, 'description', r.description);
      if (r.schema) response['schema'] = { schema: schemaMessage(r.schema) };
      return { name: code, value: { response } };
    }),
  };
  put(m, 'schemes', o.schemes);
  put(m, 'vendor_extension', vendorExtensions(o));
  return m;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function pathItemMessage(item: PathItemV2): Message {
  const m: Message = {};
  for (const method of METHODS) {
    const op = item[method];
    if (op) m[method] = operationMessage(op);
  }
  put(m, 'parameters', item.parameters?.map(parameterMessage));
  return m;
}

/**
 * The `openapi.v2.Document` message of a Swagger 2.0 document, as a plain object with the
 * .proto's (snake_case) field names, ready for protobufjs `fromObject`. Throws on a schema
 * Swagger 2.0 cannot express (oneOf).
 */
export function toGnosticDocument(doc: OpenAPIV2Document): Message {
  const m: Message = {
    swagger: doc.swagger,
    info: { title: doc.info.title, version: doc.info.version },
    paths: {
      path: Object.entries(doc.paths).map(([name, item]) => ({ name, value: pathItemMessage(item) })),
    },
    definitions: { additional_properties: namedSchemas(doc.definitions) },
    security: doc.security.map((req) => ({
      additional_properties: Object.entries(req).map(([name, scopes]) => ({
        name,
        value: { value: scopes },
      })),
    })),
    security_definitions: {
      additional_properties: Object.entries(doc.securityDefinitions).map(([name, d]) => ({
        name,
        value: {
          api_key_security: { type: d.type, name: d.name, in: d.in, description: d.description },
        },
      })),
    },
  };
  return m;
}

/**
 * Encodes a Swagger 2.0 document as gnostic's `openapi.v2.Document` protobuf bytes (what
 * kube-apiserver serves as `application/com.github.proto-openapi.spec.v2.v1.0+protobuf`).
 * Throws as toGnosticDocument().
 */
export function encodeOpenAPIV2Protobuf(doc: OpenAPIV2Document): Buffer {
  const type = gnosticDocumentType();
  const bytes = type.encode(type.fromObject(toGnosticDocument(doc))).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
