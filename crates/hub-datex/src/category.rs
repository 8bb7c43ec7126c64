//! Traffic-event categories (`traffic-event:*` tags) and their DATEX II record types.
//!
//! The first twelve rows are the reference's table (`subtypes.yaml` of the ODH DATEX
//! service, with `prohibition` enabled as in its production configuration). The last six
//! are Hub's extension for tags the provincial transformer writes but the reference
//! drops; they are used only when an announcement has none of the twelve (so an
//! announcement the reference publishes is published the same way here).

/// The record-type specific part of a situation record, in XSD element order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordType {
    AbnormalTraffic {
        abnormal_traffic_type: &'static str,
    },
    Accident {
        accident_type: &'static str,
    },
    AnimalPresenceObstruction {
        animal_presence_type: &'static str,
    },
    PoorEnvironmentConditions {
        poor_environment_type: &'static str,
    },
    PublicEvent {
        public_event_type: &'static str,
    },
    MaintenanceWorks {
        road_maintenance_type: &'static str,
    },
    DisturbanceActivity {
        disturbance_activity_type: &'static str,
    },
    RoadOrCarriagewayOrLaneManagement {
        compliance: &'static str,
        management_type: &'static str,
    },
    SpeedManagement {
        compliance: &'static str,
        speed_management_type: &'static str,
    },
    WinterDrivingManagement {
        compliance: &'static str,
        winter_equipment_management_type: &'static str,
    },
    GeneralInstructionOrMessageToRoadUsers {
        compliance: &'static str,
    },
}

impl RecordType {
    /// The `xsi:type` of the `situationRecord` element.
    pub fn xsi_type(&self) -> &'static str {
        match self {
            RecordType::AbnormalTraffic { .. } => "AbnormalTraffic",
            RecordType::Accident { .. } => "Accident",
            RecordType::AnimalPresenceObstruction { .. } => "AnimalPresenceObstruction",
            RecordType::PoorEnvironmentConditions { .. } => "PoorEnvironmentConditions",
            RecordType::PublicEvent { .. } => "PublicEvent",
            RecordType::MaintenanceWorks { .. } => "MaintenanceWorks",
            RecordType::DisturbanceActivity { .. } => "DisturbanceActivity",
            RecordType::RoadOrCarriagewayOrLaneManagement { .. } => {
                "RoadOrCarriagewayOrLaneManagement"
            }
            RecordType::SpeedManagement { .. } => "SpeedManagement",
            RecordType::WinterDrivingManagement { .. } => "WinterDrivingManagement",
            RecordType::GeneralInstructionOrMessageToRoadUsers { .. } => {
                "GeneralInstructionOrMessageToRoadUsers"
            }
        }
    }

    /// The elements that follow `groupOfLocations`, as (name, value) pairs in XSD order:
    /// the inherited NetworkManagement `complianceOption` comes before the subtype's own
    /// element.
    pub fn elements(&self) -> Vec<(&'static str, &'static str)> {
        match *self {
            RecordType::AbnormalTraffic {
                abnormal_traffic_type,
            } => vec![("abnormalTrafficType", abnormal_traffic_type)],
            RecordType::Accident { accident_type } => vec![("accidentType", accident_type)],
            RecordType::AnimalPresenceObstruction {
                animal_presence_type,
            } => vec![("animalPresenceType", animal_presence_type)],
            RecordType::PoorEnvironmentConditions {
                poor_environment_type,
            } => vec![("poorEnvironmentType", poor_environment_type)],
            RecordType::PublicEvent { public_event_type } => {
                vec![("publicEventType", public_event_type)]
            }
            RecordType::MaintenanceWorks {
                road_maintenance_type,
            } => vec![("roadMaintenanceType", road_maintenance_type)],
            RecordType::DisturbanceActivity {
                disturbance_activity_type,
            } => vec![("disturbanceActivityType", disturbance_activity_type)],
            RecordType::RoadOrCarriagewayOrLaneManagement {
                compliance,
                management_type,
            } => {
                vec![
                    ("complianceOption", compliance),
                    ("roadOrCarriagewayOrLaneManagementType", management_type),
                ]
            }
            RecordType::SpeedManagement {
                compliance,
                speed_management_type,
            } => {
                vec![
                    ("complianceOption", compliance),
                    ("speedManagementType", speed_management_type),
                ]
            }
            RecordType::WinterDrivingManagement {
                compliance,
                winter_equipment_management_type,
            } => {
                vec![
                    ("complianceOption", compliance),
                    (
                        "winterEquipmentManagementType",
                        winter_equipment_management_type,
                    ),
                ]
            }
            RecordType::GeneralInstructionOrMessageToRoadUsers { compliance } => {
                vec![("complianceOption", compliance)]
            }
        }
    }
}

/// One row of the category table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Category {
    /// The tag, without the `traffic-event:` prefix.
    pub tag: &'static str,
    pub record: RecordType,
    /// `overallSeverity` of the situation.
    pub severity: &'static str,
    /// Short-lived categories stay current while their end is in the future, or, without
    /// an end, on the local day they started. Others stay current while
    /// start <= now <= end, or forever without an end.
    pub short_lived: bool,
    /// Part of the reference's twelve (true) or Hub's extension (false).
    pub reference: bool,
}

use RecordType::*;

const fn row(
    tag: &'static str,
    record: RecordType,
    severity: &'static str,
    short_lived: bool,
    reference: bool,
) -> Category {
    Category {
        tag,
        record,
        severity,
        short_lived,
        reference,
    }
}

/// The whole table; the first twelve rows are the reference's.
pub const CATEGORIES: [Category; 18] = [
    row(
        "congestion",
        AbnormalTraffic {
            abnormal_traffic_type: "slowTraffic",
        },
        "high",
        true,
        true,
    ),
    row(
        "accident",
        Accident {
            accident_type: "accident",
        },
        "high",
        true,
        true,
    ),
    row(
        "animal-on-road",
        AnimalPresenceObstruction {
            animal_presence_type: "animalsOnTheRoad",
        },
        "high",
        true,
        true,
    ),
    row(
        "caution",
        RoadOrCarriagewayOrLaneManagement {
            compliance: "mandatory",
            management_type: "other",
        },
        "medium",
        false,
        true,
    ),
    row(
        "road-work",
        MaintenanceWorks {
            road_maintenance_type: "roadworks",
        },
        "medium",
        false,
        true,
    ),
    row(
        "weather-related",
        PoorEnvironmentConditions {
            poor_environment_type: "fog",
        },
        "high",
        true,
        true,
    ),
    row(
        "event",
        PublicEvent {
            public_event_type: "majorEvent",
        },
        "medium",
        true,
        true,
    ),
    row(
        "prohibition",
        RoadOrCarriagewayOrLaneManagement {
            compliance: "mandatory",
            management_type: "other",
        },
        "high",
        false,
        true,
    ),
    row(
        "closure",
        RoadOrCarriagewayOrLaneManagement {
            compliance: "mandatory",
            management_type: "roadClosed",
        },
        "high",
        false,
        true,
    ),
    row(
        "hindrance",
        RoadOrCarriagewayOrLaneManagement {
            compliance: "mandatory",
            management_type: "singleAlternateLineTraffic",
        },
        "medium",
        false,
        true,
    ),
    row(
        "speed-camera",
        SpeedManagement {
            compliance: "mandatory",
            speed_management_type: "policeSpeedChecksInOperation",
        },
        "low",
        true,
        true,
    ),
    row(
        "road-condition",
        WinterDrivingManagement {
            compliance: "mandatory",
            winter_equipment_management_type: "winterEquipmentOnBoardRequired",
        },
        "medium",
        false,
        true,
    ),
    // Hub's extension.
    row(
        "restriction",
        RoadOrCarriagewayOrLaneManagement {
            compliance: "mandatory",
            management_type: "other",
        },
        "medium",
        false,
        false,
    ),
    row(
        "maintenance",
        MaintenanceWorks {
            road_maintenance_type: "maintenanceWork",
        },
        "medium",
        false,
        false,
    ),
    row(
        "special",
        PublicEvent {
            public_event_type: "other",
        },
        "medium",
        true,
        false,
    ),
    row(
        "public-transport",
        DisturbanceActivity {
            disturbance_activity_type: "strike",
        },
        "low",
        false,
        false,
    ),
    row(
        "mountain-pass",
        GeneralInstructionOrMessageToRoadUsers {
            compliance: "advisory",
        },
        "low",
        false,
        false,
    ),
    row(
        "current",
        GeneralInstructionOrMessageToRoadUsers {
            compliance: "advisory",
        },
        "low",
        true,
        false,
    ),
];

const PREFIX: &str = "traffic-event:";

/// The category of an announcement from its tags: the first tag that is one of the
/// reference's twelve, else the first that is one of the extension; `None` when the
/// announcement has neither (it is then not published).
pub fn category_of<'a>(tags: impl Iterator<Item = &'a str> + Clone) -> Option<&'static Category> {
    let lookup = |tag: &str, reference: bool| {
        let name = tag.strip_prefix(PREFIX)?;
        CATEGORIES
            .iter()
            .find(|c| c.reference == reference && c.tag == name)
    };
    tags.clone()
        .find_map(|t| lookup(t, true))
        .or_else(|| tags.into_iter().find_map(|t| lookup(t, false)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat(tags: &[&str]) -> Option<&'static str> {
        category_of(tags.iter().copied()).map(|c| c.tag)
    }

    #[test]
    fn first_reference_category_wins_over_tag_order_and_extensions() {
        assert_eq!(
            cat(&[
                "announcement:traffic-event",
                "traffic-event:hindrance",
                "traffic-event:road-work"
            ]),
            Some("hindrance")
        );
        assert_eq!(
            cat(&["traffic-event:current", "traffic-event:accident"]),
            Some("accident")
        );
        assert_eq!(
            cat(&["traffic-event:mountain-pass", "traffic-event:restriction"]),
            Some("mountain-pass")
        );
        assert_eq!(cat(&["traffic-event:not-a-real-category"]), None);
        assert_eq!(
            cat(&["accident"]),
            None,
            "tags need the traffic-event: prefix"
        );
    }

    #[test]
    fn network_management_types_put_compliance_first() {
        for c in CATEGORIES {
            let names: Vec<_> = c.record.elements().iter().map(|(n, _)| *n).collect();
            if let Some(pos) = names.iter().position(|n| *n == "complianceOption") {
                assert_eq!(pos, 0, "{}", c.tag);
            }
        }
        let speed = category_of(["traffic-event:speed-camera"].into_iter()).unwrap();
        assert_eq!(
            speed.record.elements(),
            vec![
                ("complianceOption", "mandatory"),
                ("speedManagementType", "policeSpeedChecksInOperation")
            ]
        );
    }
}
