//! Random and mutated wire messages must never take the server down: after
//! each one, sent on its own connection, a fresh connection still gets an
//! answer to `ping`.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use crate::support::raw::Shared;
use bson::{Document, rawdoc};
use proptest::prelude::*;
use schemalab_wire::frame::{self, DocumentSequence};

static SERVER: Shared = Shared::new();

fn server() -> SocketAddr {
    SERVER.addr()
}

/// Well-formed requests to mutate.
fn seeds() -> Vec<Vec<u8>> {
    let seq = DocumentSequence {
        identifier: "documents".into(),
        documents: vec![rawdoc! {"_id": 1, "a": [1, {"b": "x"}]}, rawdoc! {"c": 2.5}],
    };
    vec![
        frame::encode_msg_request(1, 0, &rawdoc! {"ping": 1, "$db": "admin"}, &[]),
        frame::encode_msg_request(2, 0, &rawdoc! {"insert": "f", "$db": "fuzz"}, &[seq]),
        frame::encode_msg_request(
            3,
            frame::FLAG_CHECKSUM_PRESENT,
            &rawdoc! {"find": "f", "filter": {"a": {"$gt": 1}}, "batchSize": 1, "$db": "fuzz"},
            &[],
        ),
        frame::encode_query(4, "admin.$cmd", &rawdoc! {"ismaster": 1, "helloOk": true}),
        frame::encode_msg_request(
            5,
            0,
            &rawdoc! {"getMore": 99_i64, "collection": "f", "$db": "fuzz"},
            &[],
        ),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Flip(Vec<(usize, u8)>),
    Length(i32),
    HugeLength,
    Append(Vec<u8>),
    Random(Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        prop::collection::vec((any::<usize>(), any::<u8>()), 1..8).prop_map(Mutation::Flip),
        any::<i32>().prop_map(Mutation::Length),
        Just(Mutation::HugeLength),
        prop::collection::vec(any::<u8>(), 1..64).prop_map(Mutation::Append),
        prop::collection::vec(any::<u8>(), 0..256).prop_map(Mutation::Random),
    ]
}

fn apply(mut msg: Vec<u8>, m: &Mutation) -> Vec<u8> {
    match m {
        Mutation::Truncate(at) => {
            msg.truncate(at % msg.len());
        }
        Mutation::Flip(flips) => {
            for (at, bits) in flips {
                let i = at % msg.len();
                msg[i] ^= bits | 1;
            }
        }
        Mutation::Length(len) => msg[..4].copy_from_slice(&len.to_le_bytes()),
        Mutation::HugeLength => msg[..4].copy_from_slice(&i32::MAX.to_le_bytes()),
        Mutation::Append(extra) => msg.extend_from_slice(extra),
        Mutation::Random(bytes) => msg = bytes.clone(),
    }
    msg
}

/// Send `bytes`, half-close, and drain until the server closes.
fn send_and_drain(bytes: &[u8]) {
    let mut stream = TcpStream::connect(server()).unwrap();
    // A bound on a server bug, not a wait: a healthy server answers and
    // closes at once after our half-close.
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // The server may close early on a bad header; write errors are expected.
    let _ = stream.write_all(bytes);
    let _ = stream.shutdown(Shutdown::Write);
    let mut sink = Vec::new();
    let drained = stream.read_to_end(&mut sink);
    if let Err(e) = drained {
        assert_ne!(e.kind(), std::io::ErrorKind::WouldBlock, "server hung");
        assert_ne!(e.kind(), std::io::ErrorKind::TimedOut, "server hung");
    }
}

fn ping_works() -> bool {
    let mut stream = TcpStream::connect(server()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let ping = frame::encode_msg_request(77, 0, &rawdoc! {"ping": 1, "$db": "admin"}, &[]);
    stream.write_all(&ping).unwrap();
    let mut header = [0u8; 16];
    stream.read_exact(&mut header).unwrap();
    let len = i32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
    let mut body = vec![0u8; len - 16];
    stream.read_exact(&mut body).unwrap();
    let reply = Document::from_reader(&body[5..]).unwrap();
    reply.get_f64("ok") == Ok(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn mutated_messages_never_stop_the_server(seed in 0usize..5, m in mutation()) {
        let msg = apply(seeds()[seed].clone(), &m);
        send_and_drain(&msg);
        prop_assert!(ping_works());
    }

    #[test]
    fn several_messages_on_one_connection(
        picks in prop::collection::vec((0usize..5, mutation()), 1..4)
    ) {
        let mut bytes = Vec::new();
        for (seed, m) in &picks {
            bytes.extend(apply(seeds()[*seed].clone(), m));
        }
        send_and_drain(&bytes);
        prop_assert!(ping_works());
    }
}

#[test]
fn unmutated_seeds_are_answered() {
    for seed in seeds() {
        send_and_drain(&seed);
    }
    assert!(ping_works());
}
