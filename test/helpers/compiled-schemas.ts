import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance, FastifySchemaCompiler, RouteOptions } from 'fastify';
import { createValidatorCompiler } from '../../src/http/validation.js';

/**
 * Compiled route schemas shared by every app one test worker builds. Building an app's routes compiled their
 * response serializers (fast-json-stringify) and request validators (Ajv) afresh: about 0.9 s of CPU per app,
 * for the same schemas every time. Here each is compiled once per worker by the compilers the app itself uses
 * (Fastify's default serializer compiler, the app's validator compiler) and found again by its content: the
 * schema and, for a serializer, the shared schemas it may refer to. A route that brings its own compiler keeps it.
 */
const buildSerializer = SerializerSelector();
const validatorCompiler = createValidatorCompiler();
const serializers = new Map<string, (data: unknown) => string>();
const validators = new Map<string, ReturnType<FastifySchemaCompiler<unknown>>>();
/** Each app context's shared schemas, as text (read when its routes compile, once all are added). */
const sharedSchemasText = new WeakMap<FastifyInstance, string>();

export function shareCompiledSchemas(instance: FastifyInstance, route: RouteOptions): void {
  route.serializerCompiler ??= (definition) => {
    let shared = sharedSchemasText.get(instance);
    if (shared === undefined) sharedSchemasText.set(instance, (shared = JSON.stringify(instance.getSchemas())));
    const key = `${shared}\u0000${JSON.stringify(definition.schema)}`;
    let serializer = serializers.get(key);
    if (!serializer) serializers.set(key, (serializer = buildSerializer(instance.getSchemas())({ ...definition, httpStatus: definition.httpStatus ?? '' })));
    return serializer;
  };
  route.validatorCompiler ??= (definition) => {
    const key = `${definition.httpPart}\u0000${JSON.stringify(definition.schema)}`;
    let validate = validators.get(key);
    if (!validate) validators.set(key, (validate = validatorCompiler(definition)));
    return validate;
  };
}
