//! A class map is made from one policy generation: during a reload storm between two policies
//! that number `file` and `process` the other way round (testdata/policies/classorder_a and
//! classorder_b), every map has the numbers of the generation whose seqno it carries, never
//! one class from each.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use seaccess_objmgr::{Class, ClassMap, ClassMaps, CLASSES};
use seaccess_testkit::{compile, deadline, load};
use seaccess_types::{AccessServer, ClassId, Seqno};

/// (file, process) as each policy numbers them, from the policies themselves.
fn numbers(name: &str) -> (ClassId, ClassId) {
    let g = load(&compile(name, 33)).snapshot();
    (g.class("file").unwrap(), g.class("process").unwrap())
}

fn map_now(server: &dyn AccessServer) -> Arc<ClassMap> {
    ClassMaps::new(CLASSES, server).newest()
}

#[test]
fn a_class_map_has_the_numbers_of_its_own_generation() {
    let _d = deadline("the class maps' reload storm", Duration::from_secs(30));
    let names = ["classorder_a", "classorder_b"];
    let want = [numbers(names[0]), numbers(names[1])];
    assert_ne!(
        want[0], want[1],
        "the two policies must number the classes differently"
    );
    let images: Vec<Vec<u8>> = names
        .iter()
        .map(|n| std::fs::read(compile(n, 33)).unwrap())
        .collect();
    let server = Arc::new(load(&compile(names[0], 33)));
    // Which policy each seqno is: the first is classorder_a; each reload's, as it returns.
    let which: Arc<Mutex<HashMap<Seqno, usize>>> =
        Arc::new(Mutex::new(HashMap::from([(server.seqno(), 0)])));
    let stop = Arc::new(AtomicBool::new(false));
    let storm = {
        let (server, which, stop) = (server.clone(), which.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0usize;
            while !stop.load(Relaxed) {
                let i = (n + 1) % 2;
                let s = server.reload(&images[i]).unwrap();
                which.lock().unwrap().insert(s, i);
                n += 1;
            }
            n
        })
    };
    let mut maps = Vec::new();
    let end = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < end {
        let m = map_now(&*server);
        let class = |c: Class| m.translate(c, 0).unwrap().class.unwrap();
        maps.push((m.seqno(), class(Class::FILE), class(Class::PROCESS)));
    }
    stop.store(true, Relaxed);
    let reloads = storm.join().unwrap();
    assert!(
        reloads > 10,
        "only {reloads} reloads: the storm did not happen"
    );
    let which = which.lock().unwrap();
    let wrong: Vec<String> = maps
        .iter()
        .filter_map(|&(seqno, file, process)| {
            let i = *which.get(&seqno)?;
            ((file, process) != want[i]).then(|| {
                format!(
                    "seqno {seqno} ({}): file {file}, process {process}",
                    names[i]
                )
            })
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} maps mix two policies' numbers, e.g. {:?}",
        wrong.len(),
        maps.len(),
        wrong.first()
    );
}
