//! Three nodes in one process, through a router that can drop messages: leader crash and
//! restart, a partitioned follower, catching up by snapshot, membership changes. Every
//! scenario ends with the same keyspace on every replica.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{bounded, test_config, Cluster, STEP};
use openraft::BasicNode;

const LIMIT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn leader_killed_and_restarted_from_its_directory() {
    bounded(LIMIT, async {
        let mut c = Cluster::new(&[1, 2, 3], test_config(10_000)).await;
        c.write_keys("a", 20).await;
        let old = c.leader().await;
        c.kill(old).await;
        let new = c.leader().await;
        assert_ne!(new, old);
        c.write_keys("b", 20).await;
        c.start(old).await;
        let last = c.write_keys("c", 5).await;
        c.wait_applied(last).await;
        c.assert_same(45);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn partitioned_follower_heals() {
    bounded(LIMIT, async {
        let mut c = Cluster::new(&[1, 2, 3], test_config(10_000)).await;
        c.write_keys("a", 10).await;
        let leader = c.leader().await;
        let follower = *c.nodes.keys().find(|&&id| id != leader).unwrap();
        c.router.isolate(follower, &[1, 2, 3]);
        // The majority goes on without it.
        let last = c.write_keys("b", 20).await;
        let behind = c.nodes[&follower].raft.metrics().borrow().last_applied;
        assert!(
            behind.is_none_or(|id| id.index < last),
            "cut off, yet applied {behind:?}"
        );
        c.router.heal();
        c.wait_applied(last).await;
        c.assert_same(30);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lagging_node_catches_up_by_snapshot_after_purge() {
    bounded(LIMIT, async {
        // A snapshot every 20 entries, and no log kept behind it.
        let mut c = Cluster::new(&[1, 2, 3], test_config(20)).await;
        c.write_keys("a", 5).await;
        let leader = c.leader().await;
        let lagging = *c.nodes.keys().find(|&&id| id != leader).unwrap();
        c.kill(lagging).await;
        let last = c.write_keys("b", 60).await;
        // Wait until the leader has purged past what the lagging node holds.
        let raft = c.nodes[&leader].raft.clone();
        raft.wait(Some(STEP))
            .metrics(
                |m| m.purged.is_some_and(|p| p.index > 10),
                "leader purges its log",
            )
            .await
            .unwrap();
        c.start(lagging).await;
        c.wait_applied(last).await;
        let m = c.nodes[&lagging].raft.metrics().borrow().clone();
        assert!(m.snapshot.is_some(), "caught up without a snapshot: {m:?}");
        c.assert_same(65);
        // The installed snapshot survives a restart of the node that received it.
        c.kill(lagging).await;
        c.start(lagging).await;
        let last = c.write_keys("c", 3).await;
        c.wait_applied(last).await;
        c.assert_same(68);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn membership_three_to_five_to_three() {
    bounded(LIMIT, async {
        let mut c = Cluster::new(&[1, 2, 3], test_config(10_000)).await;
        c.write_keys("a", 10).await;
        // Nodes 4 and 5 know no leader until they are added.
        let leader = c.leader().await;
        c.start(4).await;
        c.start(5).await;
        let raft = c.nodes[&leader].raft.clone();
        for id in [4, 5] {
            raft.add_learner(id, BasicNode::new(format!("node-{id}")), true)
                .await
                .unwrap();
        }
        raft.change_membership([1, 2, 3, 4, 5], false)
            .await
            .unwrap();
        let last = c.write_keys("b", 10).await;
        c.wait_applied(last).await;
        c.assert_same(20);

        // Back to three, dropping two of the original voters.
        let leader = c.leader().await;
        let raft = c.nodes[&leader].raft.clone();
        raft.change_membership([3, 4, 5], false).await.unwrap();
        let m = raft.metrics().borrow().membership_config.clone();
        let voters: Vec<u64> = m.membership().voter_ids().collect();
        assert_eq!(voters, vec![3, 4, 5]);
        for id in [1, 2] {
            c.kill(id).await;
        }
        let last = c.write_keys("c", 10).await;
        c.wait_applied(last).await;
        c.assert_same(30);
        let _: BTreeMap<u64, (u64, u64)> = c.digests();
    })
    .await;
}
