// schema_registry_client.cjs - Confluent's JavaScript schema registry client
// (@confluentinc/schemaregistry, installed by setup-node-sr.sh) against
// sharq's registry: register, look up, check compatibility, evolve, and
// serialize and deserialize with its Avro serde. schema_registry_test.go
// runs it with NODE_PATH at the install.
//
//   node schema_registry_client.cjs REGISTRY_URL
//
// Prints one JSON line {"event":"done",...}; any failure exits 1.
'use strict';

const { SchemaRegistryClient, AvroSerializer, AvroDeserializer, SerdeType } = require('@confluentinc/schemaregistry');

const v1 = JSON.stringify({ type: 'record', name: 'User', namespace: 'js', fields: [
  { name: 'name', type: 'string' }, { name: 'age', type: 'long' }] });
const v2 = JSON.stringify({ type: 'record', name: 'User', namespace: 'js', fields: [
  { name: 'name', type: 'string' }, { name: 'age', type: 'long' }, { name: 'email', type: 'string', default: '' }] });
const bad = JSON.stringify({ type: 'record', name: 'User', namespace: 'js', fields: [
  { name: 'name', type: 'string' }, { name: 'age', type: 'long' }, { name: 'phone', type: 'string' }] });

function check(cond, what) {
  if (!cond) {
    throw new Error(what);
  }
}

async function main() {
  const url = process.argv[2];
  const client = new SchemaRegistryClient({ baseURLs: [url] });
  const topic = 'js-users';
  const subject = topic + '-value';

  const id = await client.register(subject, { schemaType: 'AVRO', schema: v1 });
  check(await client.getId(subject, { schemaType: 'AVRO', schema: v1 }) === id, 'lookup');
  const byId = await client.getBySubjectAndId(subject, id);
  check(byId.schema.includes('"User"'), 'schema by id ' + JSON.stringify(byId));
  check(!(await client.testSubjectCompatibility(subject, { schemaType: 'AVRO', schema: bad })), 'incompatible accepted');
  let refused = 0;
  try {
    await client.register(subject, { schemaType: 'AVRO', schema: bad });
  } catch (e) {
    refused = e.status;
  }
  check(refused === 409, 'incompatible registration: ' + refused);
  const id2 = await client.register(subject, { schemaType: 'AVRO', schema: v2 });
  const latest = await client.getLatestSchemaMetadata(subject);
  check(latest.id === id2 && latest.version === 2, 'latest ' + JSON.stringify(latest));
  check(JSON.stringify(await client.getAllVersions(subject)) === '[1,2]', 'versions');

  // Serialize with the latest version, deserialize by the id in the bytes.
  const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const de = new AvroDeserializer(client, SerdeType.VALUE, {});
  const user = { name: 'ada', age: 36, email: 'ada@example.com' };
  const bytes = await ser.serialize(topic, user);
  check(bytes[0] === 0 && bytes.readInt32BE(1) === id2, 'wire header ' + bytes.subarray(0, 5).toString('hex'));
  const back = await de.deserialize(topic, bytes);
  check(back.name === user.name && Number(back.age) === user.age && back.email === user.email, 'round trip ' + JSON.stringify(back));

  check(JSON.stringify(await client.deleteSubject(subject, false)) === '[1,2]', 'soft delete');
  check(JSON.stringify(await client.deleteSubject(subject, true)) === '[1,2]', 'permanent delete');
  console.log(JSON.stringify({ event: 'done', ids: [id, id2], bytes: bytes.length }));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
