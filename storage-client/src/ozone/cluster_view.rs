//! What the gateway sees of the Ozone cluster, for operators (`/metrics`,
//! the console's health page): the OMs and the one it believes leads (the
//! last to answer a command), and each datanode it has called, with
//! whether its last call got an answer. The gateway's own view, not the
//! SCM's (it speaks no SCM protocol): a datanode no request needed since
//! the start is not listed.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::backend::ClusterReport;
use crate::{ClusterView, DatanodeSeen};

use super::model::Datanode;
use super::om_client::OmClient;

/// The last outcome of the calls to each datanode, by its UUID: a
/// cluster's datanodes, so bounded by its size.
#[derive(Default)]
pub(crate) struct Reachability {
    seen: Mutex<BTreeMap<String, DatanodeSeen>>,
}

impl Reachability {
    /// Notes whether a call to `node` got an answer (any answer, an error
    /// included: the datanode is there to give it).
    pub fn record(&self, node: &Datanode, answered: bool) {
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        match seen.get_mut(&node.uuid) {
            Some(known) => known.reachable = answered,
            None => {
                let host = node
                    .address
                    .rsplit_once(':')
                    .map_or(node.address.as_str(), |(host, _)| host);
                seen.insert(
                    node.uuid.clone(),
                    DatanodeSeen {
                        uuid: node.uuid.clone(),
                        host: host.to_owned(),
                        reachable: answered,
                    },
                );
            }
        }
    }

    fn snapshot(&self) -> Vec<DatanodeSeen> {
        self.seen
            .lock()
            .map(|seen| seen.values().cloned().collect())
            .unwrap_or_default()
    }
}

/// Whether a gRPC exchange with a datanode got an answer: a message, or
/// a status its server sent (not one the transport made up for a
/// connection that failed or a deadline that passed).
pub(super) fn answered<T, E>(outcome: &Result<Result<Option<T>, tonic::Status>, E>) -> bool {
    match outcome {
        Ok(Ok(Some(_))) => true,
        Ok(Err(status)) => status.code() != tonic::Code::Unavailable,
        Ok(Ok(None)) | Err(_) => false,
    }
}

pub(super) struct OzoneCluster {
    pub om: Arc<OmClient>,
    pub datanodes: Arc<Reachability>,
}

impl ClusterReport for OzoneCluster {
    fn cluster_view(&self) -> ClusterView {
        ClusterView {
            oms: self.om.addresses(),
            om_leader: Some(self.om.leader_address().to_owned()),
            datanodes: self.datanodes.snapshot(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(uuid: &str, address: &str) -> Datanode {
        Datanode {
            uuid: uuid.into(),
            address: address.into(),
        }
    }

    #[test]
    fn each_datanode_is_listed_once_with_its_last_outcome() {
        let seen = Reachability::default();
        seen.record(&node("b", "dn2:9859"), true);
        seen.record(&node("a", "dn1:9859"), true);
        // The same datanode through its Ratis port.
        seen.record(&node("a", "dn1:9858"), false);
        let listed = seen.snapshot();
        assert_eq!(
            listed
                .iter()
                .map(|d| (d.uuid.as_str(), d.host.as_str(), d.reachable))
                .collect::<Vec<_>>(),
            [("a", "dn1", false), ("b", "dn2", true)]
        );
    }

    #[test]
    fn a_status_from_the_server_is_an_answer_a_failed_connection_is_not() {
        type Outcome = Result<Result<Option<()>, tonic::Status>, ()>;
        let refused: Outcome = Ok(Err(tonic::Status::unavailable("connection refused")));
        let error: Outcome = Ok(Err(tonic::Status::internal("GroupMismatchException")));
        assert!(!answered(&refused));
        assert!(answered(&error));
        assert!(answered::<(), ()>(&Ok(Ok(Some(())))));
        assert!(!answered::<(), ()>(&Err(())));
    }
}
