//! The work-distribution chart: entries visited (and tasks run) per rank, with the max/min ratio
//! in the title — the seed's Fig. 6, where H-DRQS stays within a few per cent.

use canopy_dist::ClusterStats;
use plotters::prelude::*;
use std::path::Path;

pub fn draw(stats: &ClusterStats, path: &Path) -> Result<(), String> {
    let n = stats.ranks.len().max(1);
    let max_entries = stats.ranks.iter().map(|r| r.entries).max().unwrap_or(0).max(1);
    let root = SVGBackend::new(path, (760, 460)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let title = format!("work per rank — {} (tasks max/min {:.3})", stats.scheduler, stats.imbalance());
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0..n).into_segmented(), 0u64..max_entries + max_entries / 10)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("rank")
        .y_desc("entries visited")
        .draw()
        .map_err(|e| e.to_string())?;
    let bars = stats.ranks.iter().map(|r| {
        let x = SegmentValue::Exact(r.rank as usize);
        let next = SegmentValue::Exact(r.rank as usize + 1);
        Rectangle::new([(x, 0), (next, r.entries)], RGBColor(49, 130, 189).filled())
    });
    chart.draw_series(bars).map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}
