//! The JSON Lines journal reader (issue 47): any bytes read as a journal
//! file either give records or an error naming a line; never a panic.
//! Every record read writes back as a line that reads as the same record.
//! Input: the file's bytes (lines bounded at 1 KB, so the bound is hit too).
#![no_main]

use capstan_journal::jsonl::read_records;
use capstan_journal::Record;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match read_records(data, 1024) {
        Ok(records) => {
            for r in records {
                let again = Record::from_line(&r.to_line()).expect("a written record reads back");
                assert_eq!(again, r);
            }
        }
        Err(e) => assert!(e.0.starts_with("record at line "), "{e}"),
    }
});
