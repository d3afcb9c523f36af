// @testcontainers/kafka's KafkaContainer, unchanged, started with sharq's
// image and put through the client check every module gets in
// docker/docker_test.go (which runs this with the node_modules
// docker/tc/setup.sh installs):
//
//   node tc_kafka.js IMAGE:TAG
//
// The module picks its mode from the tag, read as a Confluent Platform
// version: 8.0.0 and later KRaft, earlier ZooKeeper (embedded); a tag that
// is no version makes it throw. Either way it waits until the listening
// ports are bound inside the container (cat /proc/net/tcp*, awk, grep).
//
// Check (from the host, through the mapped port), with kafkajs: a topic
// with N records produced and read back by a consumer group. kafkajs has no
// share consumer, so the share-group check runs from the Go client on the
// host against the same port, asked for with a SHARQTC line; then the whole
// check runs from a container on the module's network against its BROKER
// listener (port 9092, advertised under the container's host name).
"use strict";

const readline = require("readline");
const { KafkaContainer } = require("@testcontainers/kafka");
const { Network } = require("testcontainers");
const { Kafka, logLevel } = require("kafkajs");

const N = 20;

const stdin = readline.createInterface({ input: process.stdin });
const answers = [];
const waiting = [];
stdin.on("line", (line) => (waiting.length ? waiting.shift()(line) : answers.push(line)));
stdin.on("close", () => waiting.splice(0).forEach((w) => w(null)));

// ask prints a SHARQTC request and waits for the test's answer.
async function ask(req) {
  console.log("SHARQTC " + req);
  const line = answers.length ? answers.shift() : await new Promise((resolve) => waiting.push(resolve));
  if (line === null || line.trim() !== "ok") {
    throw new Error(`${req}: ${line}`);
  }
}

// check runs the kafkajs part of the client check; returns the milliseconds
// from t0 to the first record's acknowledgement.
async function check(bootstrap, name, t0) {
  const kafka = new Kafka({ clientId: name, brokers: [bootstrap], logLevel: logLevel.WARN });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: name, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
  await admin.disconnect();

  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: name, messages: [{ value: `${name}-0` }] });
  const first = Math.round(performance.now() - t0);
  const rest = [];
  for (let i = 1; i < N; i++) {
    rest.push({ key: String(i % 7), value: `${name}-${i}` });
  }
  await producer.send({ topic: name, messages: rest });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: `${name}-group` });
  await consumer.connect();
  await consumer.subscribe({ topic: name, fromBeginning: true });
  const seen = new Set();
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumer group: ${seen.size} of ${N} records`)), 60_000);
    consumer
      .run({
        eachMessage: async ({ message }) => {
          seen.add(message.value.toString());
          if (seen.size === N) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  for (let i = 0; i < N; i++) {
    if (!seen.has(`${name}-${i}`)) {
      throw new Error(`consumer group: ${name}-${i} missing`);
    }
  }
  return first;
}

async function main() {
  const image = process.argv[2];
  if (!image || process.argv.length !== 3) {
    console.error("usage: node tc_kafka.js IMAGE:TAG");
    process.exit(2);
  }
  const network = await new Network().start();
  try {
    const t0 = performance.now();
    const kafka = await new KafkaContainer(image).withNetwork(network).withNetworkAliases("kafka").start();
    try {
      const started = Math.round(performance.now() - t0);
      const bootstrap = `${kafka.getHost()}:${kafka.getMappedPort(9093)}`;
      const name = `node-${image.split(":").pop().replace(/\./g, "-")}`;
      const first = await check(bootstrap, `${name}-host`, t0);
      console.log(`SHARQTC timing start-ms=${started} first-record-ms=${first}`);
      await ask(`check host ${bootstrap} ${name}-host-go`);
      await ask(`check network ${network.getName()} kafka:9092 ${name}-network`);
    } finally {
      await kafka.stop({ timeout: 0 });
    }
  } finally {
    await network.stop();
  }
  console.log("SHARQTC done");
  stdin.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
