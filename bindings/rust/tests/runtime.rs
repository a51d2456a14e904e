//! kwire::runtime_stats (ABI 1.2), alone in its test binary: no other test's buffers come
//! and go while it counts.

use kwire::records::DecodeOptions;

#[test]
fn runtime_stats_count_the_buffers_held() {
    let frame = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/data/fetch-response.bin"
    ))
    .unwrap();
    let before = kwire::runtime_stats().unwrap();
    assert!(before.runtime_bytes > 0 && before.heap_alloc_bytes > 0, "{:?}", before);
    let held: Vec<_> = (0..3)
        .map(|_| kwire::decode_response_frame_records_borrowed(&frame, 1, 12, &DecodeOptions::default()).unwrap())
        .collect();
    let during = kwire::runtime_stats().unwrap();
    assert_eq!(
        during.live_buffers,
        before.live_buffers + 3,
        "{:?} -> {:?}",
        before,
        during
    );
    let size: usize = held.iter().map(|d| d.table().as_bytes().len()).sum();
    assert_eq!(during.live_buffer_bytes, before.live_buffer_bytes + size as u64);
    assert!(during.heap_allocs >= before.heap_allocs);
    drop(held);
    let after = kwire::runtime_stats().unwrap();
    assert_eq!(
        (after.live_buffers, after.live_buffer_bytes),
        (before.live_buffers, before.live_buffer_bytes)
    );
}
