//! The work-distribution chart: entries visited per rank, with the max/min ratios in the title —
//! the seed's Fig. 6, where H-DRQS stays within a few per cent.

use canopy_distwalk::ClusterStats;
use plotters::prelude::*;
use std::path::Path;

pub fn draw(stats: &ClusterStats, path: &Path) -> Result<(), String> {
    let last_rank = stats.ranks.len().saturating_sub(1) as u32;
    let max_entries = stats.ranks.iter().map(|r| r.entries).max().unwrap_or(0).max(1);
    let root = SVGBackend::new(path, (760, 460)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut title = format!(
        "entries per rank — {} (max/min: entries {:.3}, tasks {:.3})",
        stats.scheduler,
        stats.imbalance(|r| r.entries),
        stats.imbalance(|r| r.tasks)
    );
    if stats.workers().len() < stats.ranks.len() {
        title.push_str(", master left out");
    }
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 17))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0..last_rank).into_segmented(), 0u64..max_entries + max_entries / 10)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("rank")
        .y_desc("entries visited")
        .draw()
        .map_err(|e| e.to_string())?;
    let bars = Histogram::vertical(&chart)
        .style(RGBColor(49, 130, 189).filled())
        .margin(6)
        .data(stats.ranks.iter().map(|r| (r.rank, r.entries)));
    chart.draw_series(bars).map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}
