"""testcontainers-python's KafkaContainer, unchanged, started with sharq's
image and put through the client check every module gets in
docker/docker_test.go (which runs this with the venv docker/tc/setup.sh
makes):

    python tc_kafka.py default|kraft IMAGE

    default  KafkaContainer(IMAGE): the module's ZooKeeper mode, waiting for
             "[KafkaServer id=N] started"
    kraft    KafkaContainer(IMAGE).with_kraft(), waiting for "Kafka Server
             started"

Check (from the host, through the mapped port): a topic with N records
produced, read back by a consumer group and by a share group
(confluent_kafka.ShareConsumer, explicit acknowledgement, every record
accepted, every commit answered without error). Then the test runs the same
check from a container on the module's network against its BROKER listener
(port 9092, advertised as the container's address), asked for with a
SHARQTC line.
"""

import sys
import time

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType
from testcontainers.community.kafka import KafkaContainer
from testcontainers.core.network import Network

N = 20
DEADLINE_S = 60


def check(bootstrap, name, t0):
    """The client check; returns the milliseconds from t0 to the first
    record's acknowledgement."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for fut in admin.create_topics([NewTopic(name, 3, 1)]).values():
        fut.result(timeout=30)
    p = ck.Producer({"bootstrap.servers": bootstrap})
    acked = []
    p.produce(name, value=(name + "-0").encode(), on_delivery=lambda err, m: acked.append(err))
    p.flush(30)
    if acked != [None]:
        raise RuntimeError("first record: %s" % acked)
    first = int((time.monotonic() - t0) * 1000)
    for i in range(1, N):
        p.produce(name, key=str(i % 7).encode(), value=("%s-%d" % (name, i)).encode(), on_delivery=lambda err, m: acked.append(err))
    p.flush(30)
    if acked != [None] * N:
        raise RuntimeError("produce: %s" % [e for e in acked if e is not None])

    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": name + "-group",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([name])
    seen = set()
    deadline = time.time() + DEADLINE_S
    while len(seen) < N and time.time() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            raise RuntimeError("consumer group: %s" % m.error())
        seen.add(m.value().decode())
    c.commit(asynchronous=False)
    c.close()
    expect_all(seen, name, "consumer group")

    # A share group starts at the end of the log unless told otherwise.
    res = ConfigResource(ResourceType.GROUP, name + "-share", incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    for fut in admin.incremental_alter_configs([res]).values():
        fut.result(timeout=30)
    s = ck.ShareConsumer({"bootstrap.servers": bootstrap, "group.id": name + "-share",
                          "share.acknowledgement.mode": "explicit"})
    s.subscribe([name])
    seen = set()
    deadline = time.time() + DEADLINE_S
    while len(seen) < N and time.time() < deadline:
        got = False
        for m in s.poll(0.2):
            if m.error():
                raise RuntimeError("share group: %s" % m.error())
            s.acknowledge(m, ck.AcknowledgeType.ACCEPT)
            seen.add(m.value().decode())
            got = True
        if got:
            bad = {str(tp): str(e) for tp, e in s.commit_sync(30).items() if e is not None}
            if bad:
                raise RuntimeError("share group acknowledgements: %s" % bad)
    s.close()
    expect_all(seen, name, "share group")
    return first


def expect_all(seen, name, what):
    for i in range(N):
        if "%s-%d" % (name, i) not in seen:
            raise RuntimeError("%s: %d of %d records, %s-%d missing" % (what, len(seen), N, name, i))


def ask(req):
    """Prints a SHARQTC request and waits for the test's answer."""
    print("SHARQTC " + req, flush=True)
    line = sys.stdin.readline().strip()
    if line != "ok":
        raise RuntimeError("%s: %s" % (req, line or "no answer"))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("default", "kraft"):
        print("usage: tc_kafka.py default|kraft IMAGE", file=sys.stderr)
        sys.exit(2)
    mode, image = sys.argv[1], sys.argv[2]
    with Network() as net:
        t0 = time.monotonic()
        kafka = KafkaContainer(image).with_network(net).with_network_aliases("kafka")
        if mode == "kraft":
            kafka = kafka.with_kraft()
        with kafka:
            started = int((time.monotonic() - t0) * 1000)
            first = check(kafka.get_bootstrap_server(), "python-%s-host" % mode, t0)
            print("SHARQTC timing start-ms=%d first-record-ms=%d" % (started, first), flush=True)
            # The BROKER listener: port 9092, advertised as the container's
            # address (hostname -i).
            ask("check network %s kafka:9092 python-%s-network" % (net.name, mode))
    print("SHARQTC done", flush=True)


if __name__ == "__main__":
    main()
