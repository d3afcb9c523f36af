#!/usr/bin/env python3
"""schema_registry_client.py - confluent-kafka-python's schema registry
client and serializers against sharq (schema_registry_test.go runs it).

  schema_registry_client.py STEP --bootstrap HOST:PORT --registry URL

Steps: api (SchemaRegistryClient calls), avro, json, protobuf (serializer
round trips: produce records serialized through the registry to a topic,
consume and deserialize them). Prints one JSON object a line, the last
{"event": "done", ...}; any failure raises (exit status 1).
"""

import argparse
import json
import sys
import uuid

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

USER_V1 = json.dumps({"type": "record", "name": "User", "namespace": "py", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "long"}]})
USER_V2 = json.dumps({"type": "record", "name": "User", "namespace": "py", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "long"},
    {"name": "email", "type": "string", "default": ""}]})
USER_BAD = json.dumps({"type": "record", "name": "User", "namespace": "py", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "long"},
    {"name": "phone", "type": "string"}]})
USER_JSON = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "User", "type": "object",
                        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                        "required": ["name", "age"]})

USERS = [{"name": "ada", "age": 36}, {"name": "grace", "age": 45}, {"name": "hedy", "age": 41}]


def emit(event, **kv):
    kv["event"] = event
    print(json.dumps(kv, sort_keys=True), flush=True)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def step_api(sr):
    subject = "py-api-value"
    sid = sr.register_schema(subject, Schema(USER_V1, "AVRO"))
    got = sr.get_schema(sid)
    check(got.schema_type == "AVRO" and '"User"' in got.schema_str, "get_schema %r" % got.schema_str)
    reg = sr.lookup_schema(subject, Schema(USER_V1, "AVRO"))
    check(reg.schema_id == sid and reg.version == 1, "lookup_schema %r" % reg)
    check(not sr.test_compatibility(subject, Schema(USER_BAD, "AVRO")), "incompatible schema accepted by the check")
    try:
        sr.register_schema(subject, Schema(USER_BAD, "AVRO"))
        raise AssertionError("incompatible schema registered")
    except SchemaRegistryError as e:
        check(e.http_status_code == 409, "incompatible: %r" % e)
        incompatible = e.error_code
    check(sr.test_compatibility(subject, Schema(USER_V2, "AVRO")), "compatible schema refused by the check")
    sid2 = sr.register_schema(subject, Schema(USER_V2, "AVRO"))
    latest = sr.get_latest_version(subject)
    check(latest.version == 2 and latest.schema_id == sid2, "latest %r" % latest)
    check(sr.get_versions(subject) == [1, 2], "versions")
    check(sr.get_version(subject, 1).schema_id == sid, "version 1")
    check(subject in sr.get_subjects(), "subjects")
    sr.set_compatibility(subject, "FULL")
    check(sr.get_compatibility(subject) == "FULL", "compatibility")
    try:
        sr.get_schema(99999)
        raise AssertionError("unknown id found")
    except SchemaRegistryError as e:
        check(e.http_status_code == 404 and e.error_code == 40403, "unknown id: %r" % e)
    deleted = sr.delete_subject(subject)
    check(deleted == [1, 2], "soft delete %r" % deleted)
    check(sr.delete_subject(subject, permanent=True) == [1, 2], "permanent delete")
    check(subject not in sr.get_subjects(), "subject still listed")
    emit("done", ids=[sid, sid2], incompatible_code=incompatible)


def round_trip(bootstrap, topic, serializer, deserializer, values, to_dict=None):
    """Produces values serialized, consumes them back and deserializes."""
    p = Producer({"bootstrap.servers": bootstrap})
    for v in values:
        data = serializer(v, SerializationContext(topic, MessageField.VALUE))
        p.produce(topic, value=data)
    check(p.flush(30) == 0, "produce did not finish")
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "sr-" + uuid.uuid4().hex,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    got = []
    try:
        while len(got) < len(values):
            m = c.poll(20)
            check(m is not None, "no record within 20 s (got %d)" % len(got))
            if m.error():
                raise RuntimeError(str(m.error()))
            check(m.value()[0] == 0, "no Confluent magic byte")
            v = deserializer(m.value(), SerializationContext(topic, MessageField.VALUE))
            got.append(to_dict(v) if to_dict else v)
    finally:
        c.close()
    return got


def step_avro(sr, bootstrap):
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    topic = "py-avro-" + uuid.uuid4().hex[:8]
    ser = AvroSerializer(sr, USER_V1)
    de = AvroDeserializer(sr)
    got = round_trip(bootstrap, topic, ser, de, USERS)
    check(got == USERS, "avro round trip %r" % got)
    latest = sr.get_latest_version(topic + "-value")
    emit("done", count=len(got), schema_id=latest.schema_id, type=latest.schema.schema_type)


def step_json(sr, bootstrap):
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
    topic = "py-json-" + uuid.uuid4().hex[:8]
    ser = JSONSerializer(USER_JSON, sr)
    de = JSONDeserializer(None, schema_registry_client=sr)
    got = round_trip(bootstrap, topic, ser, de, USERS)
    check(got == USERS, "json round trip %r" % got)
    latest = sr.get_latest_version(topic + "-value")
    emit("done", count=len(got), schema_id=latest.schema_id, type=latest.schema.schema_type)


def user_message_class():
    """A protobuf message class built from a descriptor, as generated code
    would define it: test.User {string name = 1; int64 age = 2;}."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    fdp = descriptor_pb2.FileDescriptorProto(name="sharq/user.proto", package="sharq.test", syntax="proto3")
    m = fdp.message_type.add(name="User")
    f = descriptor_pb2.FieldDescriptorProto
    m.field.add(name="name", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL, json_name="name")
    m.field.add(name="age", number=2, type=f.TYPE_INT64, label=f.LABEL_OPTIONAL, json_name="age")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("sharq.test.User"))


def step_protobuf(sr, bootstrap):
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    User = user_message_class()
    topic = "py-proto-" + uuid.uuid4().hex[:8]
    ser = ProtobufSerializer(User, sr, {"use.deprecated.format": False})
    de = ProtobufDeserializer(User, {"use.deprecated.format": False})
    msgs = [User(name=u["name"], age=u["age"]) for u in USERS]
    got = round_trip(bootstrap, topic, ser, de, msgs, to_dict=lambda m: {"name": m.name, "age": m.age})
    check(got == USERS, "protobuf round trip %r" % got)
    latest = sr.get_latest_version(topic + "-value")
    emit("done", count=len(got), schema_id=latest.schema_id, type=latest.schema.schema_type)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["api", "avro", "json", "protobuf"])
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--registry", required=True)
    a = ap.parse_args()
    sr = SchemaRegistryClient({"url": a.registry})
    if a.step == "api":
        step_api(sr)
    elif a.step == "avro":
        step_avro(sr, a.bootstrap)
    elif a.step == "json":
        step_json(sr, a.bootstrap)
    else:
        step_protobuf(sr, a.bootstrap)
    return 0


if __name__ == "__main__":
    sys.exit(main())
