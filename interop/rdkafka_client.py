"""librdkafka (through confluent-kafka for Python) against a broker.

Run by interop/rdkafka_test.go with the venv made by setup-python.sh:

    python rdkafka_client.py STEP --bootstrap HOST:PORT --topic T [options]

Steps (each prints JSON lines on stdout, one object per event, ending with a
{"event": "done", ...} line; errors go to stderr and exit non-zero):

    produce        N keyed records with headers, acks=all, idempotence on,
                   optionally compressed; reports the protocol features
                   librdkafka enabled from the broker's ApiVersions and any
                   compression it refused to use
    consume-assign reads them back by explicit assignment from the beginning
                   (no group: no coordinator needed)
    consume-group  reads them with a consumer group (classic or consumer
                   protocol), committing offsets
    share          the share consumer (KIP-932) in explicit acknowledgement
                   mode: releases key-0 once, accepts every record, reports
                   delivery counts
    eof            end of partition: a 2-partition topic with N records in
                   partition 0 only, read by assignment with
                   enable.partition.eof; reports each _PARTITION_EOF with
                   its offset, then produces one more record and waits for
                   it and the next EOF; reports protocol parse failures
                   librdkafka logged (a null records field in an empty
                   fetch is one)
"""

import argparse
import json
import logging
import re
import sys
import time

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType


# EXTRA is merged into every client's configuration (--client-config FILE:
# key=value lines, e.g. security.protocol, sasl.* and ssl.ca.location).
EXTRA = {}


def emit(**obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


def fail(msg):
    print("rdkafka_client: " + msg, file=sys.stderr, flush=True)
    sys.exit(1)


class FeatureLog(logging.Handler):
    """Collects the protocol features librdkafka enables after ApiVersions
    ("debug": "feature" logs "Enabling feature MsgVer2")."""

    pattern = re.compile(r"Enabling feature (\w+)")

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.features = set()
        self.compression = []

    def emit(self, record):
        msg = record.getMessage()
        m = self.pattern.search(msg)
        if m:
            self.features.add(m.group(1))
        # "Broker does not support compression type gzip: not compressing
        # batch": what librdkafka says when the broker's ApiVersions does
        # not list Produce from v0 (librdkafka issue 4956, KAFKA-18659).
        if "does not support compression" in msg:
            self.compression.append(msg)


def logger(name):
    handler = FeatureLog()
    lg = logging.getLogger(name)
    lg.propagate = False
    lg.addHandler(handler)
    lg.setLevel(logging.DEBUG)
    return lg, handler


def record_key(i):
    return "key-%d" % i


def create_topic(bootstrap, topic, partitions):
    admin = AdminClient({**EXTRA, "bootstrap.servers": bootstrap})
    fut = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)],
                              operation_timeout=30)[topic]
    fut.result(timeout=30)
    emit(event="created", topic=topic, partitions=partitions)


def step_produce(a):
    if a.create_partitions > 0:
        create_topic(a.bootstrap, a.topic, a.create_partitions)
    lg, log = logger("rdkafka-producer")
    p = ck.Producer({
        **EXTRA,
        "bootstrap.servers": a.bootstrap,
        "acks": "all",
        "enable.idempotence": True,
        "linger.ms": 5,
        "compression.type": a.compression,
        "debug": "feature",
        "logger": lg,
    })
    delivered = []
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
            return
        delivered.append(msg)

    for i in range(a.count):
        p.produce(a.topic, key=record_key(i).encode(), value=("value-%d" % i).encode(),
                  headers=[("idx", str(i).encode()), ("client", b"librdkafka")], on_delivery=on_delivery)
        p.poll(0)
    left = p.flush(30)
    if left:
        fail("%d records not delivered within 30s" % left)
    if errors:
        fail("delivery errors: %s" % errors[:5])
    for m in sorted(delivered, key=lambda m: (m.partition(), m.offset())):
        emit(event="delivered", key=m.key().decode(), partition=m.partition(), offset=m.offset())
    p.poll(0)  # serve the last log lines
    emit(event="done", step="produce", count=len(delivered), features=sorted(log.features),
         compression=a.compression, compression_refused=log.compression,
         librdkafka=ck.libversion()[0], client=ck.__version__)


def message_event(m, **extra):
    hdrs = m.headers() or []
    return dict(event="record", key=m.key().decode() if m.key() is not None else None,
                value=m.value().decode() if m.value() is not None else None,
                headers=[[k, v.decode() if v is not None else None] for k, v in hdrs],
                partition=m.partition(), offset=m.offset(), **extra)


def consume(c, want, deadline, seen):
    """Polls c until want records (distinct partition/offset) arrived or the
    deadline passed; appends events to seen."""
    while len({(e["partition"], e["offset"]) for e in seen}) < want and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == ck.KafkaError._PARTITION_EOF:
                continue
            fail("consume error: %s" % m.error())
        seen.append(message_event(m))


def step_consume_assign(a):
    md_client = ck.Consumer({**EXTRA, "bootstrap.servers": a.bootstrap, "group.id": "unused-metadata-only"})
    md = md_client.list_topics(a.topic, timeout=15)
    md_client.close()
    t = md.topics.get(a.topic)
    if t is None or t.error is not None:
        fail("topic %s not in metadata: %s" % (a.topic, t.error if t else "missing"))
    parts = sorted(t.partitions)
    # No group.id-based calls are made: assign() with explicit offsets needs
    # no coordinator, and auto commit is off.
    c = ck.Consumer({
        **EXTRA,
        "bootstrap.servers": a.bootstrap,
        "group.id": "interop-rdkafka-assign-unused",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": False,
    })
    c.assign([ck.TopicPartition(a.topic, p, ck.OFFSET_BEGINNING) for p in parts])
    seen = []
    consume(c, a.count, time.time() + a.timeout, seen)
    c.close()
    for e in sorted(seen, key=lambda e: (e["partition"], e["offset"])):
        emit(**e)
    emit(event="done", step="consume-assign", count=len(seen), partitions=parts)


def step_consume_group(a):
    conf = {
        **EXTRA,
        "bootstrap.servers": a.bootstrap,
        "group.id": a.group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "enable.partition.eof": False,
    }
    if a.group_protocol == "consumer":
        conf["group.protocol"] = "consumer"
    else:
        conf["session.timeout.ms"] = 10000
    c = ck.Consumer(conf)
    assigned = []
    c.subscribe([a.topic], on_assign=lambda _c, ps: assigned.extend(p.partition for p in ps))
    seen = []
    consume(c, a.count, time.time() + a.timeout, seen)
    committed = []
    if seen:
        offs = c.commit(asynchronous=False)
        committed = sorted([p.partition, p.offset] for p in offs if p.error is None)
        bad = [str(p.error) for p in offs if p.error is not None]
        if bad:
            fail("commit errors: %s" % bad)
        # What the coordinator now holds for the group.
        got = c.committed([ck.TopicPartition(a.topic, p) for p in sorted(set(assigned))], timeout=15)
        committed_read = sorted([p.partition, p.offset] for p in got)
    else:
        committed_read = []
    c.close()
    for e in sorted(seen, key=lambda e: (e["partition"], e["offset"])):
        emit(**e)
    emit(event="done", step="consume-group", protocol=a.group_protocol, count=len(seen),
         assigned=sorted(set(assigned)), committed=committed, committed_read=committed_read)


def step_share(a):
    if not hasattr(ck, "ShareConsumer"):
        emit(event="done", step="share", supported=False, client=ck.__version__)
        return
    admin = AdminClient({**EXTRA, "bootstrap.servers": a.bootstrap})
    # The default share.auto.offset.reset is latest: records produced before
    # the group's first fetch would never be delivered.
    res = ConfigResource(ResourceType.GROUP, a.group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    for fut in admin.incremental_alter_configs([res]).values():
        fut.result(timeout=30)
    emit(event="group-config", group=a.group, key="share.auto.offset.reset", value="earliest")
    c = ck.ShareConsumer({
        **EXTRA,
        "bootstrap.servers": a.bootstrap,
        "group.id": a.group,
        "share.acknowledgement.mode": "explicit",
    })
    c.subscribe([a.topic])
    seen = []
    accepted = set()
    commits = 0
    deadline = time.time() + a.timeout
    while len(accepted) < a.count and time.time() < deadline:
        batch = c.poll(0.5)
        got = False
        for m in batch:
            if m.error():
                fail("share consume error: %s" % m.error())
            # The first record is released once: the broker must hand it
            # out again with delivery count 2.
            ack = ck.AcknowledgeType.ACCEPT
            if m.key() == record_key(0).encode() and m.delivery_count() == 1:
                ack = ck.AcknowledgeType.RELEASE
            else:
                accepted.add((m.partition(), m.offset()))
            seen.append(message_event(m, delivery=m.delivery_count(), ack=ack.name))
            c.acknowledge(m, ack)
            got = True
        if got:
            res = c.commit_sync(30)
            bad = {str(tp): str(e) for tp, e in res.items() if e is not None}
            if bad:
                fail("commit_sync errors: %s" % bad)
            commits += 1
    c.close()
    for e in sorted(seen, key=lambda e: (e["partition"], e["offset"], e["delivery"])):
        emit(**e)
    emit(event="done", step="share", supported=True, count=len(seen), commits=commits)


class ParseLog(logging.Handler):
    """Collects librdkafka's protocol complaints ("Protocol parse failure",
    "invalid MessageSetSize")."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.failures = []

    def emit(self, record):
        msg = record.getMessage()
        if "parse failure" in msg.lower() or "MessageSetSize" in msg:
            self.failures.append(msg)


def step_eof(a):
    create_topic(a.bootstrap, a.topic, 2)
    p = ck.Producer({"bootstrap.servers": a.bootstrap, "acks": "all", "linger.ms": 0})
    for i in range(a.count):
        p.produce(a.topic, partition=0, key=record_key(i).encode(), value=("value-%d" % i).encode())
    if p.flush(30):
        fail("records not delivered within 30s")
    handler = ParseLog()
    lg = logging.getLogger("rdkafka-eof")
    lg.propagate = False
    lg.addHandler(handler)
    lg.setLevel(logging.DEBUG)
    c = ck.Consumer({
        "bootstrap.servers": a.bootstrap,
        "group.id": "interop-rdkafka-eof-unused",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        "fetch.wait.max.ms": 100,
        "logger": lg,
    })
    c.assign([ck.TopicPartition(a.topic, part, ck.OFFSET_BEGINNING) for part in (0, 1)])
    deadline = time.time() + a.timeout
    records = 0
    eofs = {}

    def poll_until(done):
        nonlocal records
        while not done() and time.time() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                if m.error().code() == ck.KafkaError._PARTITION_EOF:
                    emit(event="eof", partition=m.partition(), offset=m.offset())
                    eofs[m.partition()] = m.offset()
                    continue
                fail("consume error: %s" % m.error())
            records += 1
            emit(event="record", partition=m.partition(), offset=m.offset(), key=m.key().decode())

    poll_until(lambda: eofs.get(0) == a.count and eofs.get(1) == 0)
    first = dict(eofs)
    p.produce(a.topic, partition=0, key=record_key(a.count).encode(), value=b"after-eof")
    if p.flush(30):
        fail("the record after EOF was not delivered within 30s")
    poll_until(lambda: eofs.get(0) == a.count + 1)
    c.poll(0)  # serve the last log lines
    c.close()
    emit(event="done", step="eof", records=records,
         first_eof={str(k): v for k, v in sorted(first.items())},
         eof={str(k): v for k, v in sorted(eofs.items())},
         parse_failures=handler.failures[:5])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["produce", "consume-assign", "consume-group", "share", "eof"])
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--group", default="")
    ap.add_argument("--group-protocol", choices=["classic", "consumer"], default="classic")
    ap.add_argument("--compression", default="none", help="produce: compression.type")
    ap.add_argument("--create-partitions", type=int, default=0, help="produce: create the topic first")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--client-config", default="", help="key=value lines merged into every client config")
    a = ap.parse_args()
    if a.client_config:
        with open(a.client_config) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    k, _, v = line.partition("=")
                    EXTRA[k.strip()] = v.strip()
    if a.step in ("consume-group", "share") and not a.group:
        fail("--group is required for " + a.step)
    {"produce": step_produce, "consume-assign": step_consume_assign,
     "consume-group": step_consume_group, "share": step_share, "eof": step_eof}[a.step](a)


if __name__ == "__main__":
    main()
