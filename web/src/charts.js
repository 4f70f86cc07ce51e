// The charts: Apache ECharts (docs/dependencies.md), only the parts the dashboard draws, on canvas.
// Tooltips are drawn in the canvas too (renderMode 'richText'): names from the wire never become
// HTML. The palette is Okabe-Ito (readable with colour-vision deficiency), and ARIA decals add a
// pattern per series as a second cue.
import * as echarts from 'echarts/core';
import { BarChart, CustomChart, LineChart } from 'echarts/charts';
import {
    AriaComponent, DataZoomComponent, GraphicComponent, GridComponent, LegendComponent, MarkAreaComponent,
    MarkLineComponent, TooltipComponent,
} from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([BarChart, CustomChart, LineChart, AriaComponent, DataZoomComponent,
    GraphicComponent, GridComponent, LegendComponent, MarkAreaComponent, MarkLineComponent, TooltipComponent,
    CanvasRenderer]);

export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];
// Diverging blue - white - vermillion (Okabe-Ito ends): distinct for deuteranopia and protanopia.
export const DIVERGING = ['#0072B2', '#9cc7e4', '#f7f7f7', '#f3b27a', '#D55E00'];

const live = new Set();

// A chart in el (a sized container); disposed by disposeAll when the view changes. `decals`
// false for charts whose colour is a value scale (a heatmap), where patterns would hide it.
export function chart(el, option, decals = true) {
    const c = echarts.init(el, null, { renderer: 'canvas' });
    c.setOption({
        color: PALETTE,
        aria: { enabled: true, decal: { show: decals } },
        animation: false,
        tooltip: { renderMode: 'richText', confine: true },
        ...option,
    });
    live.add(c);
    return c;
}

export function disposeAll() {
    // later, not inside the event that changed the view: a chart disposed while zrender still
    // dispatches that click's mouse events throws (its painter is gone)
    const old = [...live];
    live.clear();
    setTimeout(() => { for (const c of old) c.dispose(); }, 0);
}

window.addEventListener('resize', () => { for (const c of live) c.resize(); });
